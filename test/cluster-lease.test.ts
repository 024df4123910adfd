import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, TaskRuntime, type NewTask, type TaskContext, type TaskOwner } from '@mcp-tasks/core';
import { leaseErrorText, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './support/database.js';

const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'lease', clientId: 'client', resource: '' });

let database: TestDatabase;
let admin: pg.Pool;
let survivor: PostgresTaskStore;

before(async () => {
  database = await createTestDatabase();
  admin = new pg.Pool({ connectionString: database.url, max: 2 });
  // The survivor's reaper runs only when a test asks (intervalMs large), so rounds are deterministic.
  survivor = await PostgresTaskStore.connect({ connectionString: database.url, nodeId: 'survivor', leaseMs: 60_000, reaper: { intervalMs: 3_600_000, batchSize: 10, batchPauseMs: 1 }, logger: quiet });
});

after(async () => {
  await survivor.close();
  await admin.end();
  await database.drop();
});

/** Makes a node's lease run out now (what a crash looks like once leaseMs passed). */
async function expireLease(nodeId: string): Promise<void> {
  await admin.query(`UPDATE mcp_tasks.nodes SET lease_expires_at = now() - interval '1 second' WHERE node_id = $1`, [nodeId]);
}

test('the runtime records the store\'s leased node id on its tasks, and refuses another one', async () => {
  const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, nodeId: 'n-ids', reaper: { intervalMs: 0 }, logger: quiet });
  try {
    const runtime = new TaskRuntime({ store });
    assert.equal(runtime.nodeId, 'n-ids');
    assert.throws(() => new TaskRuntime({ store, nodeId: 'other' }), /differs from the store's leased node/);
    const { rows } = await admin.query(`SELECT lease_ms::int AS lease_ms FROM mcp_tasks.nodes WHERE node_id = 'n-ids'`);
    assert.equal(rows[0].lease_ms, 30_000);
  } finally {
    await store.close();
  }
});

test('a node renews its lease every third of it, and releases it on close', async () => {
  const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, nodeId: 'n-renew', leaseMs: 300, reaper: { intervalMs: 0 }, logger: quiet });
  const first = await store.lease!.testSignals.renewed.waitOnce(2_000);
  const second = await store.lease!.testSignals.renewed.waitOnce(2_000);
  assert.ok(second > first);
  await store.close();
  const { rows } = await admin.query(`SELECT lease_expires_at <= now() AS expired FROM mcp_tasks.nodes WHERE node_id = 'n-renew'`);
  assert.equal(rows[0].expired, true);
});

test('tasks of a node whose lease expired fail with the lease error; a completed task stays completed', async () => {
  const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, nodeId: 'n-dead', leaseMs: 60_000, reaper: { intervalMs: 0 }, logger: quiet });
  const runtime = new TaskRuntime({ store, pollIntervalMs: 60_000, onError: () => {} });
  try {
    const o = owner();
    const done = await runtime.start({ owner: o, tool: 'quick', args: {}, execute: () => ({ content: [] }) });
    let aborted!: Promise<void>;
    const started = new Promise<void>((resolve) => {
      void runtime.start({
        owner: o,
        tool: 'wait',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          aborted = new Promise((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
          resolve();
          await aborted;
          return { content: [] };
        },
      }).then((record) => (waiting = record));
    });
    let waiting!: Awaited<ReturnType<typeof runtime.start>>;
    await started;
    await waitUntil(async () => waiting !== undefined && (await store.get(done))?.status === 'completed');
    await waitUntil(async () => store.listener.state === 'listening');

    await expireLease('n-dead');
    const result = await survivor.reaper.runOnce();
    assert.equal(result.ran, true);
    assert.equal(result.failed, 1);
    const failed = await survivor.get(waiting);
    assert.equal(failed?.status, 'failed');
    assert.deepEqual(failed?.error, { code: -32603, message: leaseErrorText('n-dead', 'lease expired') });
    assert.equal(failed?.error?.message, 'The server running this task stopped (node n-dead lease expired)');
    assert.equal((await survivor.get(done))?.status, 'completed');
    // The node is alive (a long pause, not a crash): the reaper's cancel aborts its run, and the
    // run's own outcome loses its compare-and-set.
    await aborted;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await survivor.get(waiting))?.status, 'failed');

    // Its next renewal finds the lease lost and starts a new one.
    await store.lease!.renewOnce();
    assert.equal(await store.lease!.testSignals.lost.waitOnce(1_000), 0);
    const { rows } = await admin.query(`SELECT lease_expires_at > now() AS held FROM mcp_tasks.nodes WHERE node_id = 'n-dead'`);
    assert.equal(rows[0].held, true);
  } finally {
    await runtime.close();
    await store.close();
  }
});

test('the reaper pages through many tasks by id, and forgets the node once nothing of it is live', async () => {
  const o = owner();
  await admin.query(`INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms) VALUES ('ghost', now(), now(), now() - interval '1 second', 1000)`);
  const tasks: NewTask[] = Array.from({ length: 25 }, () => ({ taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'ghost' }));
  for (const task of tasks) await survivor.create(task, { maxLive: Infinity });
  await survivor.finish(tasks[0]!, { status: 'completed', result: { content: [] } });
  survivor.reaper.testSignals.batchFailed.clear();
  const result = await survivor.reaper.runOnce();
  assert.equal(result.failed, 24);
  assert.ok(result.nodesDeleted >= 1);
  assert.equal((await admin.query(`SELECT 1 FROM mcp_tasks.nodes WHERE node_id = 'ghost'`)).rowCount, 0);
  // Pages of 10 by id (the completed task takes a slot in one of them), then an empty page.
  const batches = await Promise.all(Array.from({ length: result.batches }, () => survivor.reaper.testSignals.batchFailed.waitOnce()));
  assert.equal(result.batches, 4);
  assert.equal(batches.reduce((a, b) => a + b, 0), 24);
  assert.ok(batches.every((n) => n <= 10));
  assert.equal((await survivor.get(tasks[0]!))?.status, 'completed');
  for (const task of tasks.slice(1)) assert.equal((await survivor.get(task))?.status, 'failed');
  assert.equal((await survivor.reaper.runOnce()).failed, 0);
});

test('tasks of a node without a lease row, or with a live lease, are left alone', async () => {
  const o = owner();
  const orphan: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'never-leased' };
  const mine: NewTask = { ...orphan, taskId: newTaskId(), nodeId: 'survivor' };
  await survivor.create(orphan, { maxLive: Infinity });
  await survivor.create(mine, { maxLive: Infinity });
  await survivor.reaper.runOnce();
  assert.equal((await survivor.get(orphan))?.status, 'working');
  assert.equal((await survivor.get(mine))?.status, 'working');
});

test('a node restarting under the same id fails what its previous incarnation left live', async () => {
  const o = owner();
  const left: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'n-restart' };
  await survivor.create(left, { maxLive: Infinity });
  const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, nodeId: 'n-restart', reaper: { intervalMs: 0 }, logger: quiet });
  try {
    assert.equal(await store.lease!.testSignals.registered.waitOnce(1_000), 1);
    const task = await survivor.get(left);
    assert.equal(task?.status, 'failed');
    assert.equal(task?.error?.message, 'The server running this task stopped (node n-restart restarted)');
  } finally {
    await store.close();
  }
});

test('only one node reaps at a time', async () => {
  const other = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, nodeId: 'n-peer', reaper: { intervalMs: 0 }, logger: quiet });
  try {
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => (i % 2 ? other : survivor).reaper.runOnce()));
    // runOnce on one store never overlaps itself; across stores the advisory lock lets one through at a time.
    assert.ok(results.some((r) => r.ran));
  } finally {
    await other.close();
  }
});

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
