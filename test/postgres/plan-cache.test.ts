// Every hot statement the store prepares is planned once per connection and then run from
// PostgreSQL's generic plan: a statement that PostgreSQL plans anew at each execution (its
// custom plan always looks cheaper) costs the planning each time, and planning a join across
// partitions beside kept rows costs more than running it (docs/scale-out.md, "Batched
// statements keep their generic plan"). A pool of one connection lets the test read that
// connection's pg_prepared_statements; the batches are made by asking while one is under way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { horizonReady } from '../support/partition-horizon.js';
import { testPool } from '../support/pg-clients.js';
import { within } from '../support/within.js';

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 1 });
  store = await PostgresTaskStore.connect({ pool });
  const node = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false, rescuer: false, stats: false, testSignals: true });
  await within(node.partitioner!.runOnce(), 10_000, 'a partition round');
  await node.stop();
  await horizonReady(pool);
  await keepHistory(HISTORY_ROWS);
});

after(async () => {
  await store?.close();
  await pool?.end();
  await database?.drop();
});

/**
 * Finished tasks of 100 owners expiring over the next hour and a half, analysed: the planner's
 * view of a table in use. On empty partitions every plan costs next to nothing and the generic
 * plan wins anyway; beside rows, a custom plan that knows a batch's length looks cheaper.
 */
const HISTORY_ROWS = 20_000;

async function keepHistory(rows: number): Promise<void> {
  await pool.query(
    `INSERT INTO mcp_tasks.tasks (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status, created_at, last_updated_at, ttl_ms, expires_at, expiry_key, poll_interval_ms, result, node_id)
     SELECT 'history-' || i, 'owner-' || (i % 100), 'plans', '', '', '["owner-' || (i % 100) || '","plans","",""]', 'export', 'completed',
            e - interval '1 hour', e - interval '1 hour', 3600000, e, e, 1000, '{"content":[]}', 'n'
       FROM generate_series(1, $1::int) AS i,
            LATERAL (SELECT date_trunc('milliseconds', now()) + interval '5 minutes' + (i % 5400) * interval '1 second' AS e) AS expiry`,
    [rows],
  );
  await pool.query('VACUUM ANALYZE mcp_tasks.tasks');
}

const ROUNDS = 8;
const AT_ONCE = 4;
let owners = 0;
const freshOwner = (): TaskOwner => ({ subject: `owner-${++owners}`, server: 'plans', clientId: '', resource: '' });
const task = (owner: TaskOwner): NewTask => ({ taskId: newTaskId(Date.now() + 600_000), owner, tool: 'export', scopes: [], ttlMs: 600_000, pollIntervalMs: 1_000, nodeId: 'n' });
const held = { nodeId: 'n', attempt: 1 };

/** One round of every hot operation, each asked `AT_ONCE` times together (one alone, the rest as a batch). */
async function round(): Promise<void> {
  const tasks = Array.from({ length: AT_ONCE }, () => task(freshOwner()));
  await Promise.all(tasks.map((t) => store.create(t, { maxLive: Infinity })));
  const refs: TaskRef[] = tasks.map((t) => ({ taskId: t.taskId, owner: t.owner }));
  await Promise.all(refs.map((ref) => store.read(ref)));
  await Promise.all(refs.map((ref) => store.get(ref)));
  await Promise.all(refs.map((ref) => store.setStatusMessage(ref, 'half way', held)));
  await Promise.all(refs.map((ref) => store.beginStep(ref, held, 'fetch')));
  await Promise.all(refs.map((ref) => store.finishStep(ref, held, 'fetch', { rows: 1 })));
  await store.controlStates(refs);
  await store.cancel(refs[0]!);
  await Promise.all(refs.slice(1).map((ref) => store.finish(ref, { status: 'completed', result: { content: [] } }, held)));
}

interface PlanCounts {
  readonly name: string;
  readonly generic: number;
  readonly custom: number;
}

async function planCounts(): Promise<PlanCounts[]> {
  const { rows } = await pool.query<{ name: string; generic: string; custom: string }>(
    'SELECT name, generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements ORDER BY name',
  );
  return rows.map((row) => ({ name: row.name.replace(/_[0-9a-f]{16}$/, ''), generic: Number(row.generic), custom: Number(row.custom) }));
}

test('every prepared statement run more than five times runs from its generic plan', { timeout: 60_000 }, async () => {
  await within(
    (async () => {
      for (let i = 0; i < ROUNDS; i += 1) await round();
    })(),
    45_000,
    'the rounds',
  );
  const counts = await planCounts();
  const warmed = counts.filter((count) => count.generic + count.custom > 5);
  for (const batch of ['mcp_tasks_read_task_batch', 'mcp_tasks_create_tasks', 'mcp_tasks_finish_tasks', 'mcp_tasks_set_status_messages', 'mcp_tasks_begin_steps', 'mcp_tasks_finish_steps']) {
    assert.ok(
      warmed.some((count) => count.name === batch),
      `${batch} ran more than five times (have ${counts.map((count) => `${count.name} ${count.generic + count.custom}`).join(', ')})`,
    );
  }
  const replanned = warmed.filter((count) => count.generic === 0).map((count) => `${count.name} (${count.custom} custom plans)`);
  assert.deepEqual(replanned, [], 'statements PostgreSQL planned anew at every execution');
});
