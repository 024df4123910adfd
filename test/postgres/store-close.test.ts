import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/demo-process.js';
import { testClient } from '../support/pg-clients.js';

let database: TestDatabase;
before(async () => (database = await createTestDatabase()));
after(() => database.drop());

describe('PostgresTaskStore.close', { timeout: 30_000 }, () => {
  it('closes every connection of the pool it created, also when the store only migrated (what npm start does before the nodes start)', async () => {
    const store = await PostgresTaskStore.connect({ connectionString: database.url, poolSize: 1, migrate: true });
    await store.close();
    const admin = testClient({ connectionString: database.url });
    await admin.connect();
    try {
      const name = new URL(database.url).pathname.slice(1);
      const others = async () => Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows[0].n);
      // pg's idle timeout would close a leaked connection after 10 s: well within that, none is left.
      await eventually(async () => (await others()) === 0, 3_000, 'no connection of the closed store is left');
    } finally {
      await admin.end();
    }
  });
});
