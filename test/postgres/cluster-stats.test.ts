// The cluster's counts (ClusterStatsService): computed by one node at a time into one row that
// every node reads, against a real PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask, type TaskOwner } from '@mcp-tasks/core';
import { countsByStatus, PostgresOperator, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';
import { explainAnalyzed, nodesOf, recordStatements, type SentStatement } from '../support/query-plans.js';
import { insertCopiesOf } from '../support/task-copies.js';

let database: TestDatabase;
let store: PostgresTaskStore;
let nodes: PostgresTaskNode[];
let admin: pg.Pool;

// Built, not started: each test runs the rounds it wants. A long interval, so a round right
// after another node's finds the counts fresh.
const quiet = { lease: false, reaper: false, listener: false, sweeper: false, rescuer: false, stats: { intervalMs: 60_000 }, testSignals: true } as const;

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url });
  nodes = [new PostgresTaskNode(store, { ...quiet, nodeId: 'stats-a' }), new PostgresTaskNode(store, { ...quiet, nodeId: 'stats-b' })];
  admin = testPool({ connectionString: database.url, max: 2 });
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await store.close();
  await admin.end();
  await database.drop();
});

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'stats', clientId: '', resource: '' });
const task = (o: TaskOwner, nodeId: string | null, ttlMs: number | null = null): NewTask => ({ taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs, pollIntervalMs: 1_000, nodeId });

test('one round counts unexpired tasks by node and status and the oldest live one; a round right after on another node reads them without counting', async () => {
  const [a, b] = nodes as [PostgresTaskNode, PostgresTaskNode];
  const o = owner();
  const oldest = task(o, 'stats-a');
  await store.create(oldest, { maxLive: Infinity });
  await admin.query(`UPDATE mcp_tasks.tasks SET created_at = now() - interval '1 hour' WHERE id = $1`, [oldest.taskId]);
  const live = [task(o, 'stats-a'), task(o, 'stats-b'), task(o, null)];
  const done = [task(o, 'stats-b'), task(o, 'stats-b')];
  const expiring = [task(o, 'stats-a', 50), task(o, 'stats-a', 50)];
  await Promise.all([...live, ...done, ...expiring].map((t) => store.create(t, { maxLive: Infinity })));
  await admin.query(`UPDATE mcp_tasks.tasks SET status = 'completed' WHERE id = ANY($1)`, [done.map((t) => t.taskId)]);
  await new Promise((resolve) => setTimeout(resolve, 100));

  const first = await a.stats!.runOnce();
  assert.equal(first.computed, true);
  assert.equal(nodeName(first.stats?.computedBy), 'stats-a');
  assert.deepEqual(
    [...first.stats!.counts].sort((x, y) => `${x.nodeId}${x.status}`.localeCompare(`${y.nodeId}${y.status}`)),
    [
      { nodeId: null, status: 'working', count: 1 },
      { nodeId: 'stats-a', status: 'working', count: 2 },
      { nodeId: 'stats-b', status: 'completed', count: 2 },
      { nodeId: 'stats-b', status: 'working', count: 1 },
    ],
    'expired tasks are not counted',
  );
  assert.deepEqual(countsByStatus(first.stats), { working: 4, input_required: 0, completed: 2, failed: 0, cancelled: 0 });
  assert.ok(first.stats!.oldestLiveAgeMs! >= 3_600_000 && first.stats!.oldestLiveAgeMs! < 3_700_000, String(first.stats!.oldestLiveAgeMs));

  // Another task now: a round of B within the interval does not count it, it reads A's row.
  await store.create(task(o, 'stats-b'), { maxLive: Infinity });
  const second = await b.stats!.runOnce();
  assert.equal(second.computed, false);
  assert.equal(nodeName(second.stats?.computedBy), 'stats-a');
  assert.deepEqual(second.stats?.counts, first.stats?.counts);
  assert.deepEqual(b.stats!.latest?.counts, first.stats?.counts, 'B keeps what it read');
  assert.deepEqual(await PostgresOperator.forStore(store).clusterStats().then((stats) => stats?.counts), first.stats?.counts);

  // Once the row is older than the freshness window, the next round counts again.
  await admin.query(`UPDATE mcp_tasks.cluster_stats SET computed_at = now() - interval '1 hour'`);
  const third = await b.stats!.runOnce();
  assert.equal(third.computed, true);
  assert.equal(nodeName(third.stats?.computedBy), 'stats-b');
  assert.equal(countsByStatus(third.stats).working, 5);
});

test('while one node holds the role another node\'s round skips counting', async () => {
  const [a, b] = nodes as [PostgresTaskNode, PostgresTaskNode];
  await admin.query(`UPDATE mcp_tasks.cluster_stats SET computed_at = now() - interval '1 hour'`);
  const holder = await admin.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('mcp-tasks:cluster-stats:mcp_tasks', 0))`);
    const skipped = await a.stats!.runOnce();
    assert.equal(skipped.computed, false);
    assert.equal(nodeName(skipped.stats?.computedBy), 'stats-b', 'it still reads the last counts');
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  assert.equal((await b.stats!.runOnce()).computed, true);
});

const FINISHED_HISTORY = 20_000;

/** `count` completed copies of a completed task of `o` (ids and ages differ, the rest alike). */
async function finishedHistory(o: TaskOwner, count: number): Promise<void> {
  const template = task(o, 'stats-history', 3_600_000);
  await store.create(template, { maxLive: Infinity });
  await admin.query(`UPDATE mcp_tasks.tasks SET status = 'completed' WHERE id = $1`, [template.taskId]);
  await insertCopiesOf(admin, template.taskId, count - 1);
  await admin.query('ANALYZE mcp_tasks.tasks');
}

const stale = () => admin.query(`UPDATE mcp_tasks.cluster_stats SET computed_at = now() - interval '1 hour'`);

test(`a round reads the live tasks, not the ${FINISHED_HISTORY} finished ones kept until their TTL`, async () => {
  // Found at 10 million kept tasks (bench scenario 23): each round counted them all, 7.7 s of a
  // core every 15 s, past the round's 5 s statement timeout, so the counts were never written.
  const pool = testPool({ connectionString: database.url, max: 1 });
  const sent: SentStatement[] = [];
  recordStatements(pool, (text) => text.includes('INSERT INTO "mcp_tasks"."cluster_stats"'), sent);
  const watched = await PostgresTaskStore.connect({ pool, migrate: false });
  const node = new PostgresTaskNode(watched, { ...quiet, nodeId: 'stats-c' });
  try {
    const o = owner();
    await finishedHistory(o, FINISHED_HISTORY);
    await Promise.all(Array.from({ length: 5 }, () => store.create(task(o, 'stats-c'), { maxLive: Infinity })));
    await stale();
    assert.equal((await node.stats!.runOnce()).computed, true);
    const round = sent.at(-1);
    assert.ok(round, 'the round\'s statement was seen');
    await stale();
    const plan = await explainAnalyzed(admin, round);
    const scans = [...nodesOf(plan)].filter((step) => step['Relation Name']?.startsWith('tasks'));
    assert.ok(scans.length > 0, JSON.stringify(plan));
    const read = scans.reduce((sum, step) => sum + (step['Actual Rows'] + (step['Rows Removed by Filter'] ?? 0)) * step['Actual Loops'], 0);
    // The live tasks of this file's tests, each counted by the three aggregates: tens, not thousands.
    assert.ok(read <= 200, `the round read ${read} rows of tasks: ${JSON.stringify(scans.map((step) => [step['Node Type'], step['Relation Name'], step['Actual Rows'], step['Rows Removed by Filter']]))}`);
  } finally {
    await node.stop();
    await watched.close();
    await pool.end();
  }
});

test('the finished tasks are counted once per finishedIntervalMs and carried forward by the rounds between; false counts live tasks only', async () => {
  const hourly = new PostgresTaskNode(store, { ...quiet, nodeId: 'stats-d', stats: { intervalMs: 60_000, finishedIntervalMs: 3_600_000 } });
  const never = new PostgresTaskNode(store, { ...quiet, nodeId: 'stats-e', stats: { intervalMs: 60_000, finishedIntervalMs: false } });
  try {
    const o = owner();
    const completedOf = (round: { stats: Parameters<typeof countsByStatus>[0] }) => countsByStatus(round.stats).completed;
    await admin.query('UPDATE mcp_tasks.cluster_stats SET finished_counted_at = NULL');
    await stale();
    const first = await hourly.stats!.runOnce();
    const finishedBefore = completedOf(first);
    const workingBefore = countsByStatus(first.stats).working;

    const finished = task(o, 'stats-d');
    await store.create(finished, { maxLive: Infinity });
    await store.finish({ taskId: finished.taskId, owner: o }, { status: 'completed', result: { content: [] } });
    await store.create(task(o, 'stats-d'), { maxLive: Infinity });
    await stale();
    const second = await hourly.stats!.runOnce();
    assert.equal(countsByStatus(second.stats).working, workingBefore + 1, 'live tasks are counted every round');
    assert.equal(completedOf(second), finishedBefore, 'the finished counts are carried forward within the interval');

    await admin.query(`UPDATE mcp_tasks.cluster_stats SET finished_counted_at = now() - interval '2 hours'`);
    await stale();
    const third = await hourly.stats!.runOnce();
    assert.equal(completedOf(third), finishedBefore + 1, 'once the interval has passed they are counted again');
    assert.equal(countsByStatus(third.stats).working, workingBefore + 1);

    await stale();
    const live = await never.stats!.runOnce();
    assert.equal(live.computed, true);
    assert.equal(completedOf(live), 0, 'finishedIntervalMs false: no finished counts');
    assert.equal(countsByStatus(live.stats).working, workingBefore + 1);
  } finally {
    await hourly.stop();
    await never.stop();
  }
});

test('a count of the finished tasks that fails is not tried again until the next one is due; the live counts are written either way', async () => {
  // A history no count finishes within 50 ms (a count reads about a million rows a second here).
  const warnings: string[] = [];
  const logger = { warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };
  const node = new PostgresTaskNode(store, { ...quiet, nodeId: 'stats-f', logger, stats: { intervalMs: 60_000, finishedIntervalMs: 3_600_000, finishedTimeoutMs: 50 } });
  try {
    const o = owner();
    await finishedHistory(o, 300_000);
    await admin.query('UPDATE mcp_tasks.cluster_stats SET finished_counted_at = NULL');
    await stale();
    const before = await node.stats!.runOnce();
    assert.equal(before.computed, true, 'the round resolves with the live counts');
    assert.equal(warnings.length, 1, `one warning for the failed count: ${JSON.stringify(warnings)}`);
    assert.match(warnings[0]!, /counting the finished tasks failed/);

    await store.create(task(o, 'stats-f'), { maxLive: Infinity });
    await stale();
    const after = await node.stats!.runOnce();
    assert.equal(countsByStatus(after.stats).working, countsByStatus(before.stats).working + 1, 'live counts are written');
    assert.equal(warnings.length, 1, 'no second try within the interval');
  } finally {
    await node.stop();
  }
});
