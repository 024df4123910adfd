import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testClient } from './pg-clients.js';

/** A database of its own for one test file; `drop()` removes it. */
export interface TestDatabase {
  /** Connection string of the fresh database. */
  readonly url: string;
  /** Terminates leftover connections and drops the database. Idempotent. */
  drop(): Promise<void>;
}

/**
 * Creates a fresh database with a random name on the server of `DATABASE_URL`, so test files can
 * run in parallel without seeing each other's rows. `npm test` (scripts/test.mjs) sets
 * `DATABASE_URL`; running a file directly needs it set by hand.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env['DATABASE_URL'];
  if (!serverUrl) throw new Error('DATABASE_URL is not set; run the tests through `npm test`');
  return createScratchDatabase(serverUrl, 'mcp_tasks_test');
}

/** A fresh database named `<prefix>_<random>` on the server of `serverUrl` (the tests' and the benchmarks'). */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<TestDatabase & { readonly name: string }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    name,
    drop: () =>
      (dropped ??= withAdminClient(serverUrl, async (client) => {
        // WITH (FORCE) would do this in one step, but only from PostgreSQL 13.
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)}`);
      })),
  };
}

async function withAdminClient(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = testClient({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
