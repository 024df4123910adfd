// Twelve node processes on one PostgreSQL with the default max_connections of 100 (issue 32,
// point 3): each node's connection budget is its pool (MCP_TASKS_POOL_SIZE) plus its listener and
// its lease connection, so twelve nodes with pools of 5 need at most 84. The smoke: a task created
// on one node is answered on another and read on a third, a cancel sent on one node stops the run
// on another, and the tasks of a SIGKILLed node fail with the lease error on the others; the
// server's connections never pass the budget and no node is ever refused a connection.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../../packages/demo/src/cluster/embedded-postgres.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { testPool } from '../support/pg-clients.js';

const NODES = 12;
const POOL_SIZE = 5;
/** Pool, listener, lease: what docs/scale-out.md gives as a node's connection budget. */
const BUDGET = NODES * (POOL_SIZE + 2);
const LEASE_MS = 3_000;
const ENV = { MCP_TASKS_POOL_SIZE: String(POOL_SIZE), MCP_TASKS_LEASE_MS: String(LEASE_MS), MCP_TASKS_POLL_INTERVAL_MS: '5000', MCP_TASKS_DRAIN_MS: '300' };
// Twelve processes start on two cores: compiled, in groups of four.
const SPAWN = { startTimeoutMs: 90_000, compiled: true };
const DELIVERY_BOUND_MS = 3_000;

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

describe(`${NODES} nodes on one PostgreSQL with max_connections 100`, { timeout: 300_000 }, () => {
  let dir: string;
  let server: EmbeddedPostgresServer;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-twelve-'));
    server = await startEmbeddedPostgres({ parentDir: dir, name: 'twelve', postgresFlags: ['-c', 'max_connections=100'], stopOnSignal: true });
    admin = testPool({ connectionString: server.url, max: 1 });
    const sample = async () => {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
      peak = Math.max(peak, rows[0]!.n);
    };
    sampler = setInterval(() => void sample().catch(() => undefined), 100);
    const env = { ...ENV, DATABASE_URL: server.url };
    // The first applies the migrations; the others find them applied.
    nodes.push(await spawnDemoNode('n01', env, SPAWN));
    for (let first = 2; first <= NODES; first += 4) {
      const names = Array.from({ length: Math.min(4, NODES - first + 1) }, (_, i) => `n${String(first + i).padStart(2, '0')}`);
      const spawned = await Promise.allSettled(names.map((name) => spawnDemoNode(name, env, SPAWN)));
      for (const result of spawned) if (result.status === 'fulfilled') nodes.push(result.value);
      for (const result of spawned) if (result.status === 'rejected') throw result.reason;
    }
  });

  after(async () => {
    clearInterval(sampler);
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin?.end();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('all twelve hold a lease', async () => {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_tasks.nodes WHERE lease_expires_at > now()');
    assert.equal(rows[0]!.n, NODES);
  });

  it('a task created on one node is answered on another and read on a third; a cancel on one node stops the run on another', async () => {
    for (let round = 0; round < 4; round++) {
      const [a, b, c] = [nodes[round]!, nodes[(round + 5) % NODES]!, nodes[(round + 9) % NODES]!];
      const confirm = await startTask(a.url, 'confirm_delete', { filename: `r${round}.txt` });
      await waitFor(c.url, confirm, (task) => task['status'] === 'input_required');
      const answered = await rpc(b.url, 'tasks/update', { taskId: confirm, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
      assert.equal(answered.error, undefined, JSON.stringify(answered.error));
      await waitFor(c.url, confirm, (task) => task['status'] === 'completed', DELIVERY_BOUND_MS);

      const long = await startTask(c.url, 'slow_compute', { seconds: 600 });
      await eventually(async () => (await metric(c.base, 'mcp_tasks_running')) === 1, 10_000, `${c.name} runs the task`);
      const cancelled = await rpc(a.url, 'tasks/cancel', { taskId: long });
      assert.equal(cancelled.error, undefined, JSON.stringify(cancelled.error));
      await eventually(async () => (await metric(c.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, `${c.name} stops the run`);
    }
  });

  it("a SIGKILLed node's task fails with the lease error, read on the others", async () => {
    const doomed = nodes[NODES - 1]!;
    const taskId = await startTask(doomed.url, 'slow_compute', { seconds: 600 });
    await eventually(async () => (await metric(doomed.base, 'mcp_tasks_running')) === 1, 10_000, 'the doomed node runs the task');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const failed = await waitFor(nodes[0]!.url, taskId, (task) => task['status'] === 'failed', LEASE_MS * 3 + 5_000);
    assert.match(JSON.stringify(failed), /lease/i);
  });

  it(`the server never held more than the budget of ${BUDGET} connections, and no node was refused one`, () => {
    assert.ok(peak > 0, 'the sampler saw the nodes');
    assert.ok(peak <= BUDGET, `peak ${peak} connections > budget ${BUDGET}`);
    for (const node of nodes) assert.doesNotMatch(node.output(), /too many clients|remaining connection slots/i, node.name);
  });
});
