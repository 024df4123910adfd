import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { readFile, readdir } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InvalidTaskValueError, newTaskId, ownerKey } from '@mcp-tasks/core';
import { PostgresTaskStore, loadMigrations, migrate } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { within } from '../support/within.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let database: TestDatabase;
let pool: pg.Pool;

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 4 });
});

after(async () => {
  await pool.end();
  await database.drop();
});

async function appliedVersions(schema: string): Promise<number[]> {
  const { rows } = await pool.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
  return rows.map((row) => row.version);
}

test('the runner applies every file once and is a no-op the second time', async () => {
  const files = await loadMigrations();
  assert.ok(files.length >= 1);
  const first = await migrate(pool, 'idempotent');
  assert.deepEqual(first.applied, files.map((file) => file.name));
  const second = await migrate(pool, 'idempotent');
  assert.deepEqual(second.applied, []);
  assert.deepEqual(await appliedVersions('idempotent'), files.map((file) => file.version));
});

test('runners starting together on several pools apply each file exactly once', async () => {
  const files = await loadMigrations();
  const pools = Array.from({ length: 6 }, () => testPool({ connectionString: database.url, max: 1 }));
  try {
    const results = await Promise.all(pools.map((p) => migrate(p, 'together')));
    const applied = results.flatMap((result) => result.applied);
    assert.deepEqual(applied, files.map((file) => file.name));
    assert.deepEqual(await appliedVersions('together'), files.map((file) => file.version));
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

test('the schema is substitutable: a store on its own schema keeps its own tasks', async () => {
  const tenant = await PostgresTaskStore.connect({ connectionString: database.url, schema: 'tenant_a' });
  const main = await PostgresTaskStore.connect({ connectionString: database.url });
  try {
    const owner = { subject: `user-${randomUUID()}`, server: 'migrations', clientId: '', resource: '' };
    const task = { taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: null };
    await tenant.create(task, { maxLive: Infinity });
    assert.ok(await tenant.get(task));
    assert.equal(await main.get(task), undefined);
    const { rows } = await pool.query('SELECT id FROM tenant_a.tasks');
    assert.deepEqual(rows, [{ id: task.taskId }]);
  } finally {
    await tenant.close();
    await main.close();
  }
});

test('a schema name that is not a plain identifier is refused before anything runs', async () => {
  await assert.rejects(migrate(pool, 'bad"; DROP TABLE x; --'), InvalidTaskValueError);
  await assert.rejects(PostgresTaskStore.connect({ connectionString: database.url, schema: 'Upper' }), InvalidTaskValueError);
});

test('migrate: false leaves the database alone', async () => {
  const store = await PostgresTaskStore.connect({ connectionString: database.url, schema: 'untouched', migrate: false });
  await store.close();
  const { rows } = await pool.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = 'untouched'`);
  assert.equal(rows.length, 0);
});

test('the migrations compiled into the package are exactly the files of migrations/', async () => {
  const directory = path.join(root, 'migrations');
  const names = (await readdir(directory)).filter((name) => name.endsWith('.sql')).sort();
  const files = await Promise.all(names.map(async (name) => ({ name, sql: await readFile(path.join(directory, name), 'utf8') })));
  const embedded = (await loadMigrations()).map(({ name, sql }) => ({ name, sql }));
  assert.deepEqual(embedded, files, 'run npm run build to regenerate packages/postgres/src/migrations/embedded-migrations.ts');
  assert.deepEqual(await loadMigrations(directory), await loadMigrations());
});

test('the cut-over to the partitioned table keeps the rows in place, and waits behind a long reader by giving up and trying again', { timeout: 30_000 }, async () => {
  const schema = 'cutover';
  const files = await loadMigrations();
  await migrate(pool, schema, files.filter((file) => file.version < 30));
  const create = (id: string, ttlMs: number | null) =>
    pool.query(`SELECT id FROM ${schema}.create_durable_task($1, 's', 'srv', 'c', '', 'k', 'export', '{}', NULL, $2, 1000, 'n1', 10, NULL, NULL, true, 3, NULL, false, NULL, NULL)`, [id, ttlMs]);
  const [hourly, forever] = [newTaskId(), newTaskId()];
  await create(hourly, 3_600_000);
  await create(forever, null);
  await pool.query(`INSERT INTO ${schema}.task_steps (task_id, name, done) VALUES ($1, 'file-1', true)`, [hourly]);
  await pool.query(`UPDATE ${schema}.tasks SET status = 'completed' WHERE id = $1`, [hourly]);

  // A reader holds the table in an open transaction for longer than migration 0030's lock_timeout.
  const reader = testPool({ connectionString: database.url, max: 1 });
  const held = await reader.connect();
  try {
    await held.query('BEGIN');
    await held.query(`SELECT count(*) FROM ${schema}.tasks`);
    const started = performance.now();
    const migrating = migrate(pool, schema);
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    await held.query('COMMIT');
    const { applied } = await within(migrating, 20_000, 'the migration, tried again once the reader is gone');
    assert.deepEqual(applied, files.filter((file) => file.version >= 30).map((file) => file.name));
    assert.ok(performance.now() - started >= 2_000, 'its first try gave up after the lock_timeout');
  } finally {
    held.release();
    await reader.end();
  }

  const { rows } = await pool.query<{ id: string; partition: string; key: number }>(
    `SELECT id, tableoid::regclass::text AS partition, expiry_key AS key FROM ${schema}.tasks ORDER BY created_at, id`,
  );
  assert.deepEqual(new Set(rows.map((row) => `${row.id} ${row.partition} ${row.key}`)), new Set([hourly, forever].map((id) => `${id} ${schema}.tasks_unbounded Infinity`)));
  const { rows: children } = await pool.query<{ steps: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM ${schema}.task_steps WHERE task_id = $1) AS steps, (SELECT count(*)::int FROM ${schema}.task_events WHERE task_id = $1) AS events`,
    [hourly],
  );
  assert.deepEqual(children[0], { steps: 1, events: 2 });
  const { rows: key } = await pool.query<{ columns: string }>(
    `SELECT string_agg(a.attname, ',' ORDER BY k.n) AS columns
       FROM pg_constraint c, unnest(c.conkey) WITH ORDINALITY AS k(attnum, n), pg_attribute a
      WHERE c.conrelid = '${schema}.tasks'::regclass AND c.contype = 'p' AND a.attrelid = c.conrelid AND a.attnum = k.attnum`,
  );
  assert.equal(key[0]?.columns, 'id,expiry_key');
  const { rows: foreign } = await pool.query(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = '${schema}'::regnamespace`);
  assert.deepEqual(foreign, [], 'no foreign key to the partitioned table');
  // The old rows keep working: a read, a write, and the row-wise delete with what hangs off them.
  await pool.query(`UPDATE ${schema}.tasks SET status_message = 'kept' WHERE id = $1`, [forever]);
  await pool.query(`DELETE FROM ${schema}.tasks WHERE id = $1`, [hourly]);
  const { rows: gone } = await pool.query(`SELECT 1 FROM ${schema}.task_steps WHERE task_id = $1 UNION ALL SELECT 1 FROM ${schema}.task_events WHERE task_id = $1`, [hourly]);
  assert.deepEqual(gone, []);
});

test('the cut-over of the steps and events (migration 0035) moves an hourly task\'s to its hour, keeps the rest, and their order goes on', { timeout: 30_000 }, async () => {
  const schema = 'journal_cutover';
  const files = await loadMigrations();
  await migrate(pool, schema, files.filter((file) => file.version < 35));
  // The current hour and two ahead, made as the leader makes them, and the horizon ready for creates.
  for (const hours of [0, 1, 2]) await pool.query(`SELECT ${schema}.make_task_partition(now() + $1 * interval '1 hour')`, [hours]);
  await pool.query(`UPDATE ${schema}.task_partition_horizon SET ready_at = '-infinity', previous_until = partitioned_until`);
  const owner = { subject: 's', server: 'srv', clientId: 'c', resource: '' };
  const create = (id: string, ttlMs: number | null) =>
    pool.query(`SELECT id FROM ${schema}.create_durable_task($1, 's', 'srv', 'c', '', $3, 'export', '{}', NULL, $2, 1000, 'n1', 10, NULL, NULL, true, 3, NULL, false, NULL, NULL)`, [id, ttlMs, ownerKey(owner)]);
  const [hourly, forever] = [newTaskId(), newTaskId()];
  await create(hourly, 3_600_000);
  await create(forever, null);
  for (const id of [hourly, forever]) {
    await pool.query(`INSERT INTO ${schema}.task_steps (task_id, name, done, result) VALUES ($1, 'fetch', true, '{"rows": 3}'), ($1, 'write', false, NULL)`, [id]);
    await pool.query(`UPDATE ${schema}.tasks SET status = 'input_required', input_keys = '{q1}', inputs = '{"q1": {"request": {}}}' WHERE id = $1`, [id]);
  }
  const before = await pool.query<{ id: string; seq: string; name: string }>(`SELECT task_id AS id, seq, name FROM ${schema}.task_steps ORDER BY seq`);
  const eventsBefore = await pool.query<{ id: string; seq: string; kind: string }>(`SELECT task_id AS id, seq, kind FROM ${schema}.task_events ORDER BY seq`);

  assert.deepEqual((await migrate(pool, schema)).applied, files.filter((file) => file.version >= 35).map((file) => file.name));

  const { rows: hourOf } = await pool.query<{ suffix: string }>(`SELECT substr(tableoid::regclass::text, length($2) + 7) AS suffix FROM ${schema}.tasks WHERE id = $1`, [hourly, schema]);
  const hour = hourOf[0]!.suffix;
  assert.match(hour, /^_p\d{10}$/);
  const placed = async (table: string) =>
    (await pool.query<{ id: string; seq: string; partition: string }>(`SELECT task_id AS id, seq, tableoid::regclass::text AS partition FROM ${schema}.${table} ORDER BY seq`)).rows;
  const steps = await placed('task_steps');
  assert.deepEqual(steps.map(({ id, seq }) => `${id} ${seq}`), before.rows.map(({ id, seq }) => `${id} ${seq}`), 'every step, its seq kept');
  for (const row of steps) assert.equal(row.partition, `${schema}.task_steps${row.id === hourly ? hour : '_unbounded'}`);
  const events = await placed('task_events');
  assert.deepEqual(events.map(({ id, seq }) => `${id} ${seq}`), eventsBefore.rows.map(({ id, seq }) => `${id} ${seq}`), 'every event, its seq kept');
  for (const row of events) assert.equal(row.partition, `${schema}.task_events${row.id === hourly ? hour : '_unbounded'}`);

  // This release's store on the migrated schema: the journal of before is found, new steps and
  // events are numbered after the old ones.
  const store = await PostgresTaskStore.connect({ connectionString: database.url, schema, poolSize: 2 });
  try {
    const claim = { nodeId: 'n1', attempt: 1 };
    for (const taskId of [hourly, forever]) {
      const ref = { taskId, owner };
      assert.deepEqual(await store.beginStep(ref, claim, 'fetch'), { state: 'done', result: { rows: 3 } }, taskId);
      assert.deepEqual(await store.beginStep(ref, claim, 'write'), { state: 'run', starts: 2 }, taskId);
      assert.deepEqual(await store.beginStep(ref, claim, 'send'), { state: 'run', starts: 1 }, taskId);
      assert.deepEqual((await store.steps(ref)).map((step) => step.name), ['fetch', 'write', 'send']);
    }
    await pool.query(`UPDATE ${schema}.tasks SET status = 'cancelled' WHERE id = ANY($1)`, [[hourly, forever]]);
    const maxBefore = Math.max(...eventsBefore.rows.map((row) => Number(row.seq)));
    const { rows: later } = await pool.query<{ id: string; seq: string; partition: string }>(
      `SELECT task_id AS id, seq, tableoid::regclass::text AS partition FROM ${schema}.task_events WHERE kind = 'cancelled' ORDER BY seq`,
    );
    assert.equal(later.length, 2);
    for (const row of later) {
      assert.ok(Number(row.seq) > maxBefore, `event seq ${row.seq} after ${maxBefore}`);
      assert.equal(row.partition, `${schema}.task_events${row.id === hourly ? hour : '_unbounded'}`);
    }
  } finally {
    await store.close();
  }
  // The row-wise delete still takes what hangs off a task with it.
  await pool.query(`DELETE FROM ${schema}.tasks WHERE id = ANY($1)`, [[hourly, forever]]);
  const { rows: gone } = await pool.query(`SELECT 1 FROM ${schema}.task_steps UNION ALL SELECT 1 FROM ${schema}.task_events`);
  assert.deepEqual(gone, []);
});
