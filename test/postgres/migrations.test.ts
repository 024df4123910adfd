import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { readFile, readdir } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InvalidTaskValueError, newTaskId } from '@mcp-tasks/core';
import { PostgresTaskStore, loadMigrations, migrate } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

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
