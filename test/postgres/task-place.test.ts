// A task id names the hour its task expires in, so a read by id (a poll, the row an answer, a
// cancel or a park locks) looks in that hour's partition and the unbounded one, not in every
// hour's (each a probe of a key that can hold millions of kept tasks); a task its id misplaces (the node's clock and the database's either side of an hour's
// edge) and a task whose id names no hour are still found.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { horizonReady } from '../support/partition-horizon.js';
import { testPool } from '../support/pg-clients.js';
import { within } from '../support/within.js';

const HOUR = 3_600_000;

let database: TestDatabase;
let admin: pg.Pool;
const ADMIN = 'task-place-admin';

before(async () => {
  database = await createTestDatabase();
  admin = testPool({ connectionString: database.url, max: 2, application_name: ADMIN });
  await withStore(async (partitioner) => {
    const node = new PostgresTaskNode(partitioner, { lease: false, reaper: false, listener: false, rescuer: false, stats: false, testSignals: true });
    await within(node.partitioner!.runOnce(), 10_000, 'a partition round');
    await node.stop();
  });
  await horizonReady(admin);
});

after(async () => {
  await admin.end();
  await database.drop();
});

/** The plans of a table that holds a history: an index probe of each partition scanned, not a read of these few rows whole. */
const PLANS_OF_A_LARGE_TABLE = '-c enable_seqscan=off';

/**
 * Runs `use` with a store of its own, closed after it, and waits for its connections to end: a
 * backend reports its counts of scans when it exits (when idle, only every ten seconds or so).
 */
async function withStore<T>(use: (store: PostgresTaskStore) => Promise<T>, options = ''): Promise<T> {
  const url = new URL(database.url);
  if (options) url.searchParams.set('options', options);
  const own = await PostgresTaskStore.connect({ connectionString: url.toString() });
  try {
    return await use(own);
  } finally {
    await own.close();
    const deadline = Date.now() + 10_000;
    const others = async (): Promise<number> =>
      (await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND application_name IS DISTINCT FROM $1`,
        [ADMIN],
      )).rows[0]!.n;
    while ((await others()) > 0) {
      if (Date.now() > deadline) throw new Error("the store's connections did not end within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'task-place', clientId: '', resource: '' });

/** A task of `ttlMs` with id `taskId`, by default one that names its expiry's hour, as a runtime mints it. */
async function create(into: PostgresTaskStore, o: TaskOwner, ttlMs: number | null, taskId = newTaskId(ttlMs === null ? null : Date.now() + ttlMs)): Promise<TaskRef> {
  const task: NewTask = { taskId, owner: o, tool: 'export', scopes: [], ttlMs, pollIntervalMs: 1_000, nodeId: 'n1' };
  const record = await into.create(task, { maxLive: 100 });
  return { taskId: record.taskId, owner: o };
}

async function partitionOf(taskId: string): Promise<string> {
  const { rows } = await admin.query<{ partition: string }>('SELECT tableoid::regclass::text AS partition FROM mcp_tasks.tasks WHERE id = $1', [taskId]);
  return rows[0]!.partition;
}

/**
 * Scans of each partition of `tasks` (and of `task_steps`) so far, by index or sequential (a small
 * partition's plan may read it whole), as the statistics have them.
 */
async function scans(table = 'tasks'): Promise<Map<string, number>> {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ partition: string; scans: string }>(
    `SELECT 'mcp_tasks.' || s.relname AS partition, coalesce(s.idx_scan, 0) + s.seq_scan AS scans
       FROM pg_inherits i JOIN pg_stat_user_tables s ON s.relid = i.inhrelid
      WHERE i.inhparent = ('mcp_tasks.' || $1)::regclass`,
    [table],
  );
  return new Map(rows.map((row) => [row.partition, Number(row.scans)]));
}

/** Asserts that between `before` and `after` no partition but those `kept` was scanned. */
function onlyScanned(before: Map<string, number>, after: Map<string, number>, kept: readonly string[]): void {
  for (const [partition, count] of after) {
    if (kept.includes(partition)) continue;
    assert.equal(count - (before.get(partition) ?? 0), 0, `${partition} was scanned ${count - (before.get(partition) ?? 0)} times`);
  }
}

test('a read by id, alone or in a batch, probes the partition the id names and the unbounded one, not the other hours', { timeout: 60_000 }, async () => {
  const o = owner();
  const [read, beside] = await withStore(async (creator) => [await create(creator, o, HOUR), await create(creator, o, 2 * HOUR)]);
  const [readPartition, besidePartition] = [await partitionOf(read.taskId), await partitionOf(beside.taskId)];
  assert.notEqual(readPartition, besidePartition);
  assert.notEqual(readPartition, 'mcp_tasks.tasks_unbounded');

  const before = await scans();
  await withStore(async (reader) => {
    // One by one, a read alone goes as the one-task statement; asked together, behind the first, as a batch.
    for (let i = 0; i < 10; i += 1) assert.equal((await reader.read(read))?.status, 'working');
    for (let i = 0; i < 10; i += 1) assert.equal((await reader.get(read))?.taskId, read.taskId);
    for (let i = 0; i < 3; i += 1) {
      const together = await Promise.all(Array.from({ length: 9 }, () => reader.read(read)));
      assert.deepEqual(new Set(together.map((snapshot) => snapshot?.taskId)), new Set([read.taskId]));
    }
  }, PLANS_OF_A_LARGE_TABLE);
  const after = await scans();

  assert.ok(after.get(readPartition)! - before.get(readPartition)! >= 20, `${readPartition}: ${after.get(readPartition)! - before.get(readPartition)!} scans`);
  onlyScanned(before, after, [readPartition, 'mcp_tasks.tasks_unbounded']);
});

test('a write by id, alone or in a batch, probes the partition the id names and the unbounded one, not the other hours', { timeout: 60_000 }, async () => {
  const o = owner();
  const [written, beside] = await withStore(async (creator) => [
    await Promise.all(Array.from({ length: 12 }, () => create(creator, o, HOUR))),
    await create(creator, o, 2 * HOUR),
  ]);
  const hour = await partitionOf(written[0]!.taskId);
  assert.notEqual(hour, await partitionOf(beside.taskId));
  const stepsHour = hour.replace('mcp_tasks.tasks_', 'mcp_tasks.task_steps_');
  const held = { nodeId: 'n1', attempt: 1 };

  const [before, stepsBefore] = [await scans(), await scans('task_steps')];
  await withStore(async (writer) => {
    // Each write alone (one statement of its own), then the same writes asked together (one batch behind the first).
    const [alone, together] = [written.slice(0, 2), written.slice(2)];
    for (const ref of alone) {
      assert.ok(await writer.setStatusMessage(ref, 'alone', held));
      assert.deepEqual(await writer.beginStep(ref, held, 'fetch'), { state: 'run', starts: 1 });
      assert.equal(await writer.finishStep(ref, held, 'fetch', { rows: 1 }), true);
    }
    assert.equal((await writer.finish(alone[0]!, { status: 'completed', result: { content: [] } }, held))?.status, 'completed');
    assert.equal((await writer.cancel(alone[1]!))?.status, 'cancelled');
    assert.ok((await Promise.all(together.map((ref) => writer.setStatusMessage(ref, 'together', held)))).every(Boolean));
    assert.ok((await Promise.all(together.map((ref) => writer.beginStep(ref, held, 'fetch')))).every((begin) => begin.state === 'run'));
    assert.ok((await Promise.all(together.map((ref) => writer.finishStep(ref, held, 'fetch', { rows: 2 })))).every(Boolean));
    const finished = await Promise.all(together.map((ref) => writer.finish(ref, { status: 'completed', result: { content: [] } }, held)));
    assert.deepEqual(finished.map((record) => record?.status), together.map(() => 'completed'));
  }, PLANS_OF_A_LARGE_TABLE);
  const [after, stepsAfter] = [await scans(), await scans('task_steps')];

  assert.ok(after.get(hour)! - before.get(hour)! > 0, `${hour} was scanned`);
  onlyScanned(before, after, [hour, 'mcp_tasks.tasks_unbounded']);
  onlyScanned(stepsBefore, stepsAfter, [stepsHour, 'mcp_tasks.task_steps_unbounded']);
});

test('a task its id misplaces, one whose id names no hour and one that never expires are found where they are', { timeout: 30_000 }, async () => withStore(async (store) => {
  const o = owner();
  const tasks = [
    // The id names an hour two hours from the task's own: its first look misses.
    await create(store, o, HOUR, newTaskId(Date.now() + 3 * HOUR)),
    // An id that names no hour, and one of an earlier release (24 characters, no hour at all).
    await create(store, o, HOUR, newTaskId()),
    await create(store, o, HOUR, randomBytes(18).toString('base64url')),
    await create(store, o, null),
    // An id that says the task never expires, of a task that does.
    await create(store, o, HOUR, newTaskId(null)),
  ];
  assert.ok((await partitionOf(tasks[0]!.taskId)).startsWith('mcp_tasks.tasks_p'));
  assert.equal(await partitionOf(tasks[3]!.taskId), 'mcp_tasks.tasks_unbounded');
  for (const ref of tasks) {
    assert.equal((await store.read(ref))?.taskId, ref.taskId);
    assert.equal((await store.get(ref))?.taskId, ref.taskId);
  }
  // Its writes, alone and asked together, find it too (each first look misses, the second finds it).
  const held = { nodeId: 'n1', attempt: 1 };
  assert.equal((await store.setStatusMessage(tasks[0]!, 'alone', held))?.statusMessage, 'alone');
  assert.deepEqual(await store.beginStep(tasks[0]!, held, 'fetch'), { state: 'run', starts: 1 });
  assert.equal(await store.finishStep(tasks[0]!, held, 'fetch', { rows: 1 }), true);
  const misplaced = await Promise.all(Array.from({ length: 4 }, () => create(store, o, HOUR, newTaskId(Date.now() + 3 * HOUR))));
  const messages = await Promise.all(misplaced.map((ref) => store.setStatusMessage(ref, 'together', held)));
  assert.deepEqual(messages.map((record) => record?.statusMessage), misplaced.map(() => 'together'));
  const begins = await Promise.all(misplaced.map((ref) => store.beginStep(ref, held, 'fetch')));
  assert.deepEqual(begins, misplaced.map(() => ({ state: 'run', starts: 1 })));
  assert.deepEqual(await Promise.all(misplaced.map((ref) => store.finishStep(ref, held, 'fetch', { rows: 2 }))), misplaced.map(() => true));
  const finished = await Promise.all(misplaced.map((ref) => store.finish(ref, { status: 'completed', result: { content: [] } }, held)));
  assert.deepEqual(finished.map((record) => record?.status), misplaced.map(() => 'completed'));
  const together = await Promise.all([...tasks, ...tasks].map((ref) => store.read(ref)));
  assert.deepEqual(together.map((snapshot) => snapshot?.taskId), [...tasks, ...tasks].map((ref) => ref.taskId));
  // A batch of ids that all name a place (the misplaced one, the never-expiring one, the one whose
  // id says it never expires) looks in their span first, then for the two it missed everywhere.
  const placed = [tasks[0]!, tasks[3]!, tasks[4]!];
  const batched = await Promise.all([...placed, ...placed, ...placed].map((ref) => store.read(ref)));
  assert.deepEqual(batched.map((snapshot) => snapshot?.taskId), [...placed, ...placed, ...placed].map((ref) => ref.taskId));
  // So does a cancel.
  assert.equal((await store.cancel(tasks[0]!))?.status, 'cancelled');
}));

test('a task that is not there, or is another owner\'s, is absent after both looks', { timeout: 30_000 }, async () => withStore(async (store) => {
  const o = owner();
  const mine = await create(store, o, HOUR);
  const stranger = { taskId: mine.taskId, owner: owner() };
  const unknown = { taskId: newTaskId(Date.now() + HOUR), owner: o };
  assert.equal(await store.read(stranger), undefined);
  assert.equal(await store.get(stranger), undefined);
  assert.equal(await store.read(unknown), undefined);
  const together = await Promise.all([stranger, unknown, mine].map((ref) => store.read(ref)));
  assert.deepEqual(together.map((snapshot) => snapshot?.taskId), [undefined, undefined, mine.taskId]);
}));
