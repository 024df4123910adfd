// The hot statements of the request path (create, read, cancel, finish, the backstop's control
// read) run as named statements: PostgreSQL parses and plans each once per connection. A pool of
// one connection lets the test read that connection's pg_prepared_statements.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 1 });
  store = await PostgresTaskStore.connect({ pool });
});

after(async () => {
  await store?.close();
  await pool?.end();
  await database?.drop();
});

const owner = { subject: 'alice', server: 'pg', clientId: '', resource: '' };
const task = (): NewTask => ({ taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'n' });

async function prepared(): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
  return rows.map((row) => row.name.replace(/_[0-9a-f]{16}$/, ''));
}

test('create, get, cancel, finish and the control read run as prepared statements, and a second read reuses the first', async () => {
  const a = task();
  const b = task();
  await store.create(a, { maxLive: Infinity });
  await store.create(b, { maxLive: Infinity });
  assert.equal((await store.get(a))?.status, 'working');
  assert.equal((await store.get(b))?.status, 'working');
  await store.cancel(a);
  await store.finish(b, { status: 'completed', result: { content: [] } });
  await store.controlStates([a, b]);
  const names = await prepared();
  for (const operation of ['mcp_tasks_create_task', 'mcp_tasks_get_task', 'mcp_tasks_cancel_task', 'mcp_tasks_finish_task', 'mcp_tasks_read_control_states']) {
    assert.ok(names.includes(operation), `${operation} is prepared (have ${names.join(', ')})`);
  }
  // Two reads of two tasks share one statement: the name depends on the text, not the values.
  assert.equal(names.filter((name) => name === 'mcp_tasks_get_task').length, 1);
});

test('a read inside a transaction (the answer path locks the row) still works beside the prepared read', async () => {
  const t = task();
  await store.create(t, { maxLive: Infinity });
  await store.requestInput(t, 'k', { method: 'roots/list', params: {} });
  const answered = await store.answerInput(t, { k: { roots: [] } });
  assert.deepEqual(answered?.accepted, ['k']);
  assert.equal((await store.get(t))?.status, 'working');
});
