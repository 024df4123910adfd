import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { testPool } from '../support/pg-clients.js';

// A short lease: two processes fighting over one lease row would show it within a second or two.
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: '200', MCP_TASKS_LEASE_MS: '1500' };

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

async function status(url: string, taskId: string): Promise<unknown> {
  return (await rpc(url, 'tasks/get', { taskId })).result?.['status'];
}

describe('node processes that share one NODE_ID', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const spawn = async (name: string, env: Record<string, string> = {}) => {
    const node = await within(spawnDemoNode(name, { ...ENV, DATABASE_URL: database.url, ...env }), 60_000, `node ${name} to start`);
    nodes.push(node);
    return node;
  };
  const leases = async (name: string) =>
    (await admin.query<{ node_id: string; held: boolean }>(`SELECT node_id, lease_expires_at > now() AS held FROM mcp_tasks.nodes WHERE name = $1 ORDER BY node_id`, [name])).rows;

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await within(Promise.all(nodes.map((node) => node.exited)), 10_000, 'the nodes to exit');
    await admin.end();
    await database.drop();
  });

  it('two live processes with the same NODE_ID both keep serving: tasks created on either complete, and /healthz and /readyz say so', { timeout: 120_000 }, async () => {
    const first = await spawn('twin');
    const second = await spawn('twin');
    // Runs of several leases: processes taking one lease from each other fail them within one.
    const taskIds = [await startTask(first.url, 'slow_compute', { seconds: 5 }), await startTask(second.url, 'slow_compute', { seconds: 5 })];
    await eventually(async () => (await metric(first.base, 'mcp_tasks_running')) === 1 && (await metric(second.base, 'mcp_tasks_running')) === 1, 10_000, 'each twin runs its task');
    for (const taskId of taskIds) {
      const done = await waitFor(first.url, taskId, (task) => task['status'] !== 'working', 30_000);
      assert.equal(done['status'], 'completed', `${JSON.stringify(done)}\n${first.output()}\n${second.output()}`);
    }
    for (const node of [first, second]) {
      assert.equal((await fetch(`${node.base}/healthz`)).status, 200);
      assert.equal((await fetch(`${node.base}/readyz`)).status, 200);
    }
    // Two leases, one per process, and neither lost its lease to the other on the way.
    assert.doesNotMatch(first.output() + second.output(), /lost its lease/);
    const held = await leases('twin');
    assert.equal(held.length, 2, JSON.stringify(held));
    assert.ok(held.every((lease) => lease.held && /^twin\/[0-9a-f]{16}$/.test(lease.node_id)), JSON.stringify(held));
    for (const node of [first, second]) node.child.kill('SIGTERM');
    assert.deepEqual(await within(Promise.all([first.exited, second.exited]), 30_000, 'the twins to drain'), [0, 0]);
  });

  it('a process started with the NODE_ID of one that is draining leaves its in-flight task alone, and the task completes', { timeout: 120_000 }, async () => {
    const old = await spawn('phoenix', { MCP_TASKS_DRAIN_MS: '60000' });
    // Long enough to outlast the successor's start on a loaded machine; checked below.
    const taskId = await startTask(old.url, 'slow_compute', { seconds: 20 });
    await eventually(async () => (await metric(old.base, 'mcp_tasks_running')) === 1, 10_000, 'the old process runs the task');
    old.child.kill('SIGTERM');
    await eventually(async () => /draining/.test(old.output()), 5_000, 'the old process drains');
    const successor = await spawn('phoenix');
    // The successor is up (its lease registered, its start settled what it settles): the task is still the old one's.
    assert.equal(await status(successor.url, taskId), 'working', 'the task was still running when the successor came up');
    const done = await waitFor(successor.url, taskId, (task) => task['status'] !== 'working', 60_000);
    assert.equal(done['status'], 'completed', `${JSON.stringify(done)}\n${old.output()}`);
    assert.equal(await within(old.exited, 30_000, 'the old process to exit'), 0);
  });

  it('a successor with the NODE_ID of a SIGKILLed process fails the dead one\'s tasks at once, without waiting for its lease', { timeout: 120_000 }, async () => {
    // A lease far longer than the test: only the successor's check of the connections can settle it in time.
    const env = { MCP_TASKS_LEASE_MS: '120000' };
    const dead = await spawn('lazarus', env);
    const taskId = await startTask(dead.url, 'slow_compute', { seconds: 600 });
    await eventually(async () => (await metric(dead.base, 'mcp_tasks_running')) === 1, 10_000, 'the doomed process runs the task');
    const deadId = (await leases('lazarus'))[0]!.node_id;
    dead.child.kill('SIGKILL');
    await within(dead.exited, 10_000, 'the killed process to exit');
    // Its connections close with the process; the database notices once their sockets read EOF.
    await eventually(
      async () => (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1`, [`%:${deadId.split('/')[1]}`])).rowCount === 0,
      10_000,
      'the killed process\'s connections to close',
    );
    const successor = await spawn('lazarus', env);
    const failed = await waitFor(successor.url, taskId, (task) => task['status'] !== 'working', 5_000);
    assert.equal(failed['status'], 'failed');
    assert.equal(JSON.stringify(failed).includes(`The server running this task stopped (node ${deadId} restarted)`), true, JSON.stringify(failed));
    // The dead process's lease is ended (a reaper may already have forgotten it, nothing of it being live).
    const rows = await leases('lazarus');
    assert.ok(rows.filter((row) => row.node_id === deadId).every((row) => !row.held), JSON.stringify(rows));
    assert.deepEqual(rows.filter((row) => row.node_id !== deadId).map((row) => row.held), [true], 'the successor holds a lease of its own');
  });
});
