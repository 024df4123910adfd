// A cancel or an answer wakes only the node that runs the task (issue 32, point 2): each node
// LISTENs on a wake channel of its own beside the broadcast one, and records it on its lease row;
// a cancel sent on any node is a NOTIFY on the runner's channel alone. Followers elsewhere still
// hear the change, and a runner that records no wake channel (a node of an earlier release) still
// gets the broadcast. Three demo node processes on one PostgreSQL, counted on their /metrics.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { listen, type ListenStream } from '../support/notifications-client.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { testPool } from '../support/pg-clients.js';

// The backstop poll is slow on purpose: what arrives well under it came through NOTIFY.
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: '5000', MCP_TASKS_LEASE_MS: '3000' };
const DELIVERY_BOUND_MS = 2_000;
/** How long a NOTIFY that was sent would take at most to be counted by a node that hears it. */
const SETTLE_MS = 400;

async function startTask(url: string, args: Record<string, unknown> = { project: 'p', files: 1_000, delayMs: 50 }): Promise<string> {
  const created = await rpc(url, 'tools/call', { name: 'export', arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

const received = (node: DemoProcess) => metric(node.base, 'mcp_tasks_control_received_total');
const ignored = (node: DemoProcess) => metric(node.base, 'mcp_tasks_control_ignored_total');

describe('wake channels: a cancel wakes the node that runs the task, not the cluster', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const streams: ListenStream[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    nodes.push(await spawnDemoNode('wake-1', { ...ENV, DATABASE_URL: database.url }));
    nodes.push(...(await Promise.all(['wake-2', 'wake-3'].map((name) => spawnDemoNode(name, { ...ENV, DATABASE_URL: database.url })))));
    // Every node runs a task once, so every node's listener is up: a node that does not listen
    // would receive nothing whatever the senders did, and prove nothing.
    for (const node of nodes) {
      const taskId = await startTask(node.url, { project: 'warm', files: 1 });
      await waitFor(node.url, taskId, (task) => task['status'] === 'completed');
    }
    for (const node of nodes) await eventually(async () => (await metric(node.base, 'mcp_tasks_listener_listening')) === 1, 10_000, `${node.name} listens`);
  });

  after(async () => {
    for (const stream of streams) stream.abort();
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin.end();
    await database.drop();
  });

  it('each node records its own wake channel on its lease row', async () => {
    const { rows } = await admin.query<{ name: string; wake_channel: string | null }>('SELECT name, wake_channel FROM mcp_tasks.nodes ORDER BY name');
    assert.deepEqual(rows.map((row) => row.name), ['wake-1', 'wake-2', 'wake-3']);
    for (const row of rows) assert.match(row.wake_channel ?? '', /^mcp_tasks_wake_[0-9a-f]{16}$/);
    assert.equal(new Set(rows.map((row) => row.wake_channel)).size, 3);
  });

  it('a cancel on node 2 of a task running on node 1 is received by node 1 alone', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url);
    await waitFor(n2.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    const before = await Promise.all(nodes.map(received));
    const cancelled = await rpc(n2.url, 'tasks/cancel', { taskId });
    assert.equal(cancelled.error, undefined);
    await eventually(async () => (await metric(n1.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, 'node 1 stops the run');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const afterCancel = await Promise.all(nodes.map(received));
    assert.equal(afterCancel[0]! - before[0]!, 1, 'node 1 received the cancel');
    assert.equal(afterCancel[1]! - before[1]!, 0, 'node 2 (where the cancel was sent) received nothing');
    assert.equal(afterCancel[2]! - before[2]!, 0, 'node 3 received nothing');
    assert.equal(await ignored(n3), 0, 'node 3 never had to drop a message that was not its own');
  });

  it('an answer on node 3 wakes node 1, which runs the task, and only node 1', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const created = await rpc(n1.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'w.txt' } });
    const taskId = created.result!['taskId'] as string;
    await waitFor(n2.url, taskId, (task) => task['status'] === 'input_required');
    const before = await Promise.all(nodes.map(received));
    const answered = await rpc(n3.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(answered.error, undefined);
    await waitFor(n2.url, taskId, (task) => task['status'] === 'completed', DELIVERY_BOUND_MS);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const afterAnswer = await Promise.all(nodes.map(received));
    assert.ok(afterAnswer[0]! - before[0]! >= 1, 'node 1 received the answer');
    assert.equal(afterAnswer[1]! - before[1]!, 0);
    assert.equal(afterAnswer[2]! - before[2]!, 0);
  });

  it('a follower on node 3 of a task running on node 1 sees its cancel at once', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url);
    await waitFor(n2.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    const stream = await listen(n3.url, [taskId]);
    streams.push(stream);
    await stream.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks' && m['params']?.['taskId'] === taskId), 5_000, 'the first frame of the task');
    await rpc(n2.url, 'tasks/cancel', { taskId });
    await stream.until(() => stream.tasks().some((task) => task['taskId'] === taskId && task['status'] === 'cancelled'), DELIVERY_BOUND_MS, 'the follower on node 3 sees the cancel');
    stream.abort();
  });

  it('a runner that records no wake channel (a node of an earlier release) still gets its cancel, by the broadcast', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url);
    await waitFor(n2.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    // What a node of the previous release leaves in its row: no wake channel.
    await admin.query("UPDATE mcp_tasks.nodes SET wake_channel = NULL WHERE name = 'wake-1'");
    const before = await received(n3);
    await rpc(n2.url, 'tasks/cancel', { taskId });
    await eventually(async () => (await metric(n1.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, 'node 1 stops the run');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    assert.equal((await received(n3)) - before, 1, 'the broadcast reaches every node, node 3 too');
    assert.ok((await ignored(n3)) >= 1, 'and node 3 drops it as not its own');
  });
});
