// The claim on PostgreSQL. It is index-driven: with one owner's backlog of thousands of queued
// tasks, the claim's plan reads a few rows per waiting owner and none of the backlog beyond each
// owner's first few. Its SQL is taken from the store's own connection as it claims, and explained
// with the same parameters, so the test sees the statement the store runs, not a copy of it. And a
// claimer that finds an owner's oldest task locked by another claimer takes that owner's next one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { explainAnalyzed, nodesOf, recordStatements, type SentStatement } from '../support/query-plans.js';
import { insertCopiesOf } from '../support/task-copies.js';

const BACKLOG = 3_000;

let database: TestDatabase;
let pool: pg.Pool;
let admin: pg.Pool;
let store: PostgresTaskStore;
const statements: SentStatement[] = [];

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 2 });
  // Keeps what the store sends while it claims.
  recordStatements(pool, (text) => text.includes('FOR UPDATE OF t SKIP LOCKED'), statements);
  store = await PostgresTaskStore.connect({ pool });
  admin = testPool({ connectionString: database.url, max: 1 });
});

after(async () => {
  await store?.close();
  await pool?.end();
  await admin?.end();
  await database?.drop();
});

const owner = (name: string): TaskOwner => ({ subject: `${name}-${randomUUID()}`, server: 'plan', clientId: 'client', resource: '' });
const task = (who: TaskOwner, nodeId: string | null) => ({ taskId: newTaskId(), owner: who, tool: 'export', scopes: [], ttlMs: 600_000, pollIntervalMs: 1_000, nodeId });

test(`a claim with one owner's backlog of ${BACKLOG} queued tasks goes to the other owner first and reads no more than a few rows of the backlog`, async () => {
  const heavy = owner('heavy');
  const light = owner('light');
  const template = await store.create(task(heavy, null), { maxLive: Infinity });
  // The heavy owner's backlog, copied from one queued task: ids and ages differ, the rest is alike.
  await insertCopiesOf(admin, template.taskId, BACKLOG - 1);
  for (let i = 0; i < 20; i += 1) await store.create(task(heavy, 'busy-node'), { maxLive: Infinity });
  const waiting = await store.create(task(light, null), { maxLive: Infinity });
  await admin.query('ANALYZE mcp_tasks.tasks');

  const claimed = await store.claim('claimer', ['export']);
  assert.equal(claimed?.taskId, waiting.taskId, 'the owner holding no task goes first, however old the backlog');
  const statement = statements.at(-1);
  assert.ok(statement, 'the claim statement was seen');

  const plan = await explainAnalyzed(admin, statement);
  const scans = [...nodesOf(plan)].filter((node) => node['Relation Name'] === 'tasks');
  assert.ok(scans.length > 0, JSON.stringify(plan));
  assert.deepEqual(scans.filter((node) => node['Node Type'] === 'Seq Scan'), [], 'no scan of the whole table');
  const mostRows = Math.max(...scans.map((node) => node['Actual Rows'] * node['Actual Loops']));
  // Per owner: its held count (20 rows) and its first few candidates; the old claim read all 3 000.
  assert.ok(mostRows <= 50, `a scan of tasks returned ${mostRows} rows: ${JSON.stringify(scans.map((node) => [node['Node Type'], node['Actual Rows'], node['Actual Loops']]))}`);
});

test('a claimer that finds the only waiting owner\'s oldest task locked by another claimer takes that owner\'s next task instead of nothing', async () => {
  const only = owner('only');
  const tool = `lock-${randomUUID()}`;
  const first = await store.create({ ...task(only, null), tool }, { maxLive: Infinity });
  const second = await store.create({ ...task(only, null), tool }, { maxLive: Infinity });
  const client = await admin.connect();
  try {
    // Another claimer's transaction holds the head row.
    await client.query('BEGIN');
    await client.query('SELECT id FROM mcp_tasks.tasks WHERE id = $1 FOR UPDATE', [first.taskId]);
    const claimed = await store.claim('claimer-2', [tool]);
    assert.equal(claimed?.taskId, second.taskId);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
  assert.equal((await store.claim('claimer-1', [tool]))?.taskId, first.taskId, 'once free, the head is claimed too');
});
