import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { testPool } from '../support/pg-clients.js';

// The nodes' backstop poll is slow on purpose: what arrives well under it came through NOTIFY.
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: '5000', MCP_TASKS_LEASE_MS: '1500' };
const DELIVERY_BOUND_MS = 2_000;

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

describe('three node processes on one database', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  let nodes: DemoProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    // The first applies the migrations; the others find them applied.
    nodes.push(await spawnDemoNode('node-1', { ...ENV, DATABASE_URL: database.url }));
    nodes.push(...(await Promise.all(['node-2', 'node-3'].map((name) => spawnDemoNode(name, { ...ENV, DATABASE_URL: database.url })))));
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin.end();
    await database.drop();
  });

  it('a task created on node 1 is read on node 2, answered on node 3, and the answer wakes node 1 at once', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url, 'confirm_delete', { filename: 'a.txt' });
    await waitFor(n2.url, taskId, (task) => task['status'] === 'input_required');
    const sent = Date.now();
    const answered = await rpc(n3.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(answered.error, undefined);
    const done = await waitFor(n2.url, taskId, (task) => task['status'] === 'completed', DELIVERY_BOUND_MS);
    assert.ok(Date.now() - sent < DELIVERY_BOUND_MS);
    assert.match(JSON.stringify(done), /Deleted a\.txt\./);
  });

  it('a cancel on node 3 marks the task cancelled at once and stops the run on node 1 (its running gauge drops)', async () => {
    const [n1, n2, n3] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url, 'export', { project: 'p', files: 1_000, delayMs: 50 });
    await waitFor(n2.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    assert.equal(await metric(n1.base, 'mcp_tasks_running'), 1);
    const sent = Date.now();
    const cancelled = await rpc(n3.url, 'tasks/cancel', { taskId });
    assert.equal(cancelled.error, undefined);
    assert.equal((await rpc(n2.url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
    await eventually(async () => (await metric(n1.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, 'node 1 stops the run');
    assert.ok(Date.now() - sent < DELIVERY_BOUND_MS);
    // The run stopped: its progress no longer moves.
    const message = (await rpc(n2.url, 'tasks/get', { taskId })).result?.['statusMessage'];
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await rpc(n2.url, 'tasks/get', { taskId })).result?.['statusMessage'], message);
  });

  it('a cancel still reaches node 1 after its listener backend was terminated', async () => {
    const [n1, n2] = nodes as [DemoProcess, DemoProcess, DemoProcess];
    const taskId = await startTask(n1.url, 'export', { project: 'p', files: 1_000, delayMs: 50 });
    await waitFor(n2.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'mcp-tasks:listener:%' AND datname = current_database()`);
    // Nodes open their LISTEN connection with their first run: node 1 has one, the others may.
    const listeners = killed.rowCount!;
    assert.ok(listeners >= 1);
    // Reconnected (with a rescan) within the listener's backoff; then the cancel goes by NOTIFY.
    await eventually(async () => {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'mcp-tasks:listener:%' AND datname = current_database()`);
      return rows[0].n >= listeners;
    }, 5_000, 'listeners reconnect');
    const sent = Date.now();
    await rpc(n2.url, 'tasks/cancel', { taskId });
    await eventually(async () => (await metric(n1.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, 'node 1 stops the run');
    assert.ok(Date.now() - sent < DELIVERY_BOUND_MS);
  });

  it('a SIGKILLed node\'s running task of a tool that is not resumable fails with the lease error within the lease; its completed task stays completed', async () => {
    const doomed = await spawnDemoNode('node-doomed', { ...ENV, DATABASE_URL: database.url });
    nodes.push(doomed);
    const [, n2] = nodes as [DemoProcess, DemoProcess];
    const quick = await startTask(doomed.url, 'export', { project: 'q', files: 1, delayMs: 0 });
    await waitFor(n2.url, quick, (task) => task['status'] === 'completed');
    // slow_compute is not resumable: its task fails with its node (export would resume elsewhere).
    const long = await startTask(doomed.url, 'slow_compute', { seconds: 600 });
    await eventually(async () => (await metric(doomed.base, 'mcp_tasks_running')) === 1, 5_000, 'the doomed node runs the task');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const killedAt = Date.now();
    const failed = await waitFor(n2.url, long, (task) => task['status'] === 'failed', 6_000);
    // Lease 1.5 s, plus up to a reaper round (lease/3, jittered) and this poll.
    assert.ok(Date.now() - killedAt < 1_500 + 1_000 + 500, `took ${Date.now() - killedAt} ms`);
    assert.match(JSON.stringify(failed), /The server running this task stopped \(node node-doomed\/[0-9a-f]{16} lease expired\)/);
    assert.equal((await rpc(n2.url, 'tasks/get', { taskId: quick })).result?.['status'], 'completed');
  });

  it('SIGTERM drains: a task that ends within MCP_TASKS_DRAIN_MS completes, the rest of tools that are not resumable fail clearly, and the process exits 0', async () => {
    const draining = await spawnDemoNode('node-draining', { ...ENV, DATABASE_URL: database.url, MCP_TASKS_DRAIN_MS: '1500' });
    nodes.push(draining);
    const [, n2] = nodes as [DemoProcess, DemoProcess];
    const short = await startTask(draining.url, 'export', { project: 's', files: 4, delayMs: 100 });
    const long = await startTask(draining.url, 'slow_compute', { seconds: 600 });
    await waitFor(n2.url, short, (task) => typeof task['statusMessage'] === 'string');
    const signalled = Date.now();
    draining.child.kill('SIGTERM');
    assert.equal(await draining.exited, 0);
    assert.ok(Date.now() - signalled < 1_500 + 2_500);
    assert.equal((await rpc(n2.url, 'tasks/get', { taskId: short })).result?.['status'], 'completed');
    const failed = (await rpc(n2.url, 'tasks/get', { taskId: long })).result!;
    assert.equal(failed['status'], 'failed');
    assert.match(JSON.stringify(failed), /The server shut down before the task finished/);
    // The lease was released, not left to run out.
    const { rows } = await admin.query(`SELECT lease_expires_at <= now() AS released FROM mcp_tasks.nodes WHERE name = 'node-draining'`);
    assert.ok(rows.every((row) => row.released === true));
  });
});
