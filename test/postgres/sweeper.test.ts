import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore, type TtlSweeper } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

let database: TestDatabase;
let store: PostgresTaskStore;
let node: PostgresTaskNode;
let sweeper: TtlSweeper;
let admin: pg.Pool;

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url });
  // The sweeper is built but not started: each test runs a sweep when it wants one. Its batches
  // keep their size (no target time), so the batch counts below do not depend on the machine.
  node = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false, sweeper: { batchSize: 100, batchPauseMs: 5, targetBatchMs: Infinity }, testSignals: true });
  sweeper = node.sweeper!;
  admin = testPool({ connectionString: database.url, max: 2 });
});

after(async () => {
  await node.stop();
  await store.close();
  await admin.end();
  await database.drop();
});

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'sweeper', clientId: '', resource: '' });
const task = (o: TaskOwner, ttlMs: number | null): NewTask => ({ taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs, pollIntervalMs: 1_000, nodeId: null });

async function rowCount(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_tasks.tasks');
  return rows[0]!.n;
}

test('expired tasks read as absent before the sweep, and the sweep deletes them in batches', async () => {
  const o = owner();
  const expiring = Array.from({ length: 250 }, () => task(o, 200));
  const lasting = [...Array.from({ length: 5 }, () => task(o, null)), ...Array.from({ length: 5 }, () => task(o, 3_600_000))];
  await Promise.all([...expiring, ...lasting].map((t) => store.create(t, { maxLive: Infinity })));
  await new Promise((resolve) => setTimeout(resolve, 300));

  // Expired but not yet deleted: absent to every read.
  assert.equal(await rowCount(), 260);
  assert.equal(await store.get(expiring[0]!), undefined);
  assert.equal((await store.controlStates(expiring.slice(0, 10))).size, 0);
  assert.ok(await store.get(lasting[0]!));

  sweeper.testSignals.batchDeleted.clear();
  const result = await sweeper.runOnce();
  assert.deepEqual(result, { ran: true, deleted: 250, batches: 3 });
  const batches = [
    await sweeper.testSignals.batchDeleted.waitOnce(),
    await sweeper.testSignals.batchDeleted.waitOnce(),
    await sweeper.testSignals.batchDeleted.waitOnce(),
  ];
  assert.deepEqual(batches, [100, 100, 50]);
  assert.equal(await rowCount(), 10);
  for (const t of lasting) assert.ok(await store.get(t));
});

test('only one node sweeps at a time: a sweep finds the lock taken and skips its round', async () => {
  const o = owner();
  const expiring = task(o, 50);
  await store.create(expiring, { maxLive: Infinity });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const other = await admin.connect();
  try {
    const { rows } = await other.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('mcp-tasks:ttl-sweeper:mcp_tasks', 0)) AS locked`);
    assert.equal(rows[0]?.locked, true);
    assert.deepEqual(await sweeper.runOnce(), { ran: false, deleted: 0, batches: 0 });
    await other.query(`SELECT pg_advisory_unlock(hashtextextended('mcp-tasks:ttl-sweeper:mcp_tasks', 0))`);
  } finally {
    other.release();
  }
  assert.deepEqual(await sweeper.runOnce(), { ran: true, deleted: 1, batches: 1 });
});

test('a node sweeps on its own every sweeper.intervalMs', async () => {
  const timed = await PostgresTaskNode.start(store, { lease: false, reaper: false, listener: false, sweeper: { intervalMs: 50 }, testSignals: true });
  try {
    const t = task(owner(), 20);
    await store.create(t, { maxLive: Infinity });
    await new Promise((resolve) => setTimeout(resolve, 40));
    for (;;) {
      const sweep = await timed.sweeper!.testSignals.swept.waitOnce(5_000);
      if (sweep.deleted > 0) break;
    }
    const { rows } = await admin.query('SELECT 1 FROM mcp_tasks.tasks WHERE id = $1', [t.taskId]);
    assert.equal(rows.length, 0);
  } finally {
    await timed.stop();
  }
});

test('a batch slower than its target makes the next one smaller, down to the minimum, and the sweep still deletes every expired task', async () => {
  // Every real batch takes longer than a microsecond: each one is "slow".
  const slow = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false, sweeper: { batchSize: 64, minBatchSize: 4, targetBatchMs: 0.001, batchPauseMs: 1 }, testSignals: true });
  try {
    const o = owner();
    await Promise.all(Array.from({ length: 90 }, () => store.create(task(o, 100), { maxLive: Infinity })));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sizes: number[] = [];
    const batches = slow.sweeper!.testSignals.batch;
    batches.clear();
    const result = await slow.sweeper!.runOnce();
    for (let i = 0; i < result.batches; i += 1) sizes.push((await batches.waitOnce()).size);
    assert.equal(result.deleted, 90);
    assert.equal(sizes[0], 64);
    assert.ok(sizes.slice(1).every((size) => size === 4), `sizes after the first slow batch: ${sizes.join(', ')}`);
    assert.equal(slow.sweeper!.batchSize, 4);
  } finally {
    await slow.stop();
  }
});

test("the sweeper's batches commit without waiting for the WAL flush, and other writes keep the server's setting", { timeout: 30_000 }, async () => {
  // A trigger records the setting each DELETE on the table ran under (the sweeper's own transaction).
  await admin.query(`CREATE TABLE mcp_tasks.delete_commit_log (setting text NOT NULL)`);
  await admin.query(`CREATE FUNCTION mcp_tasks.log_delete_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                     BEGIN INSERT INTO mcp_tasks.delete_commit_log VALUES (current_setting('synchronous_commit')); RETURN NULL; END $$`);
  await admin.query(`CREATE TRIGGER log_delete_commit AFTER DELETE ON mcp_tasks.tasks FOR EACH STATEMENT EXECUTE FUNCTION mcp_tasks.log_delete_commit()`);
  try {
    const o = owner();
    await Promise.all(Array.from({ length: 3 }, () => store.create(task(o, 20), { maxLive: Infinity })));
    await new Promise((resolve) => setTimeout(resolve, 60));
    const result = await sweeper.runOnce();
    assert.ok(result.deleted >= 3);
    const server = await admin.query<{ setting: string }>(`SELECT current_setting('synchronous_commit') AS setting`);
    await admin.query(`DELETE FROM mcp_tasks.tasks WHERE false`);
    const { rows } = await admin.query<{ setting: string }>('SELECT setting FROM mcp_tasks.delete_commit_log');
    const settings = rows.map((row) => row.setting);
    assert.deepEqual(settings.slice(0, -1), Array.from({ length: result.batches }, () => 'off'));
    assert.equal(settings.at(-1), server.rows[0]!.setting);
    assert.notEqual(server.rows[0]!.setting, 'off');
  } finally {
    await admin.query(`DROP TABLE mcp_tasks.delete_commit_log; DROP TRIGGER log_delete_commit ON mcp_tasks.tasks; DROP FUNCTION mcp_tasks.log_delete_commit()`);
  }
});

test('each batch starts where the one before it stopped: a row skipped while a writer held it is left to the next sweep, which deletes it', { timeout: 30_000 }, async () => {
  const stepping = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false, sweeper: { batchSize: 10, minBatchSize: 10, batchPauseMs: 500, targetBatchMs: Infinity }, testSignals: true });
  const writer = await admin.connect();
  try {
    const o = owner();
    // Created one after another, so they expire in this order; the first expires first.
    const tasks: NewTask[] = [];
    for (let i = 0; i < 30; i += 1) {
      const t = task(o, 100);
      await store.create(t, { maxLive: Infinity });
      tasks.push(t);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    await writer.query('BEGIN');
    await writer.query('SELECT 1 FROM mcp_tasks.tasks WHERE id = $1 FOR UPDATE', [tasks[0]!.taskId]);
    const signals = stepping.sweeper!.testSignals.batch;
    signals.clear();
    const sweeping = stepping.sweeper!.runOnce();
    // The first batch stepped around the held row; the writer lets it go before the second batch.
    assert.equal((await signals.waitOnce()).deleted, 10);
    await writer.query('ROLLBACK');
    const first = await sweeping;
    assert.deepEqual(first, { ran: true, deleted: 29, batches: 3 });
    const { rows } = await admin.query<{ id: string }>('SELECT id FROM mcp_tasks.tasks WHERE owner_subject = $1', [o.subject]);
    assert.deepEqual(rows.map((row) => row.id), [tasks[0]!.taskId]);
    assert.deepEqual(await stepping.sweeper!.runOnce(), { ran: true, deleted: 1, batches: 1 });
  } finally {
    await writer.query('ROLLBACK').catch(() => undefined);
    writer.release();
    await stepping.stop();
  }
});
