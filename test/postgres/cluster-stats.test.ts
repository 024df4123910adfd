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
