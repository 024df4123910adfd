// Through PgBouncer in transaction mode (Debian's 1.18, its defaults: no prepared statements kept,
// no startup parameters but the tracked ones) the store's statements never fail: the pooler hands
// a client a different backend per transaction, so a named statement is unknown or already taken
// there. The store notices the first such failure, runs that statement again unprepared and stops
// naming statements.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newTaskId, type NewTask } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { pgBouncerMissing, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { testClient } from '../support/pg-clients.js';

const skip = pgBouncerMissing();
let database: TestDatabase;
let bouncer: PgBouncer;
const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  // Migrated directly, as the demo's migrate step does; the pooled stores below do not migrate.
  await (await PostgresTaskStore.connect({ connectionString: database.url })).close();
  bouncer = await startPgBouncer(database.url, { poolSize: 4 });
});

after(async () => {
  await bouncer?.stop();
  await database?.drop();
});

const owner = { subject: 'alice', server: 'pooler', clientId: '', resource: '' };
const task = (): NewTask => ({ taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'n' });

test('through PgBouncer in transaction mode, 90 concurrent creates, reads, cancels and finishes all succeed', { skip, timeout: 60_000 }, async () => {
  // More clients than the pooler's backends, so clients share backends, as they do in production.
  const store = await PostgresTaskStore.connect({ connectionString: bouncer.url, poolSize: 8, migrate: false, logger });
  try {
    const failures: string[] = [];
    const rounds = Array.from({ length: 90 }, async (_, i) => {
      const t = task();
      try {
        await store.create(t, { maxLive: Infinity });
        assert.equal((await store.get(t))?.status, 'working');
        assert.equal((await store.read(t))?.status, 'working');
        await store.controlStates([t]);
        const ended = i % 2 === 0 ? await store.cancel(t) : await store.finish(t, { status: 'completed', result: { content: [] } });
        assert.equal(ended?.status, i % 2 === 0 ? 'cancelled' : 'completed');
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      }
    });
    await Promise.all(rounds);
    assert.deepEqual(failures, [], `${failures.length} of 90 rounds failed: ${[...new Set(failures)].join('; ')}`);
    const { rows } = await countTasks(database.url);
    assert.equal(rows[0]!.n, 90, 'every task was written exactly once');
    assert.equal(warnings.filter((warning) => /prepared statements do not survive/.test(warning)).length, 1, 'the switch is logged once');
  } finally {
    await store.close();
  }
});

test('preparedStatements: false never names a statement, so nothing fails nor warns through the pooler', { skip, timeout: 60_000 }, async () => {
  warnings.length = 0;
  const store = await PostgresTaskStore.connect({ connectionString: bouncer.url, poolSize: 8, migrate: false, logger, preparedStatements: false });
  try {
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, async () => {
        const t = task();
        await store.create(t, { maxLive: Infinity });
        return store.get(t);
      }),
    );
    assert.deepEqual(
      results.filter((result) => result.status === 'rejected').map((result) => String((result as PromiseRejectedResult).reason)),
      [],
    );
    assert.deepEqual(warnings, []);
  } finally {
    await store.close();
  }
});

test('preparedStatements must be true, false or auto', () => {
  assert.throws(() => new PostgresTaskStore({ connectionString: 'postgres://127.0.0.1/x', preparedStatements: 'yes' as never }), /preparedStatements must be true, false or 'auto'/);
});

async function countTasks(url: string): Promise<{ rows: { n: number }[] }> {
  const client = testClient({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_tasks.tasks');
  } finally {
    await client.end();
  }
}
