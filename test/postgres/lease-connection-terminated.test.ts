// The lease connection survives the server ending it while a statement holds it (a PostgreSQL
// restart, an operator's pg_terminate_backend). Found by the chaos soak (seed 4101): in a fast
// restart the server's "terminating connection due to administrator command" reached the lease's
// client between its statements, while it was checked out of its pool with no `error` listener,
// and the 'error' event nobody handled ended the node process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import type pg from 'pg';
import { LeaseConnection } from '../../packages/postgres/src/maintenance/lease-connection.js';
import { sessionConnections } from '../../packages/postgres/src/node/session-connections.js';
import { connectionOf } from '../../packages/postgres/src/postgres-task-store.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

let database: TestDatabase;
let admin: pg.Pool;
let store: PostgresTaskStore;

before(async () => {
  database = await createTestDatabase();
  admin = testPool({ connectionString: database.url, max: 1 });
  store = await PostgresTaskStore.connect({ connectionString: database.url, logger: { warn: () => {}, error: () => {} } });
});

after(async () => {
  await store?.close();
  await admin?.end();
  await database?.drop();
});

test('the server ending the lease connection between two statements is a logged failure, not a crash, and the next statement reconnects', { timeout: 30_000 }, async () => {
  const { pool, sql } = connectionOf(store);
  const warnings: string[] = [];
  let warned: () => void = () => {};
  const failureLogged = new Promise<void>((resolve) => (warned = resolve));
  const logger = {
    warn: (message: string) => {
      warnings.push(message);
      warned();
    },
    error: (message: string) => warnings.push(message),
  };
  const lease = new LeaseConnection(sessionConnections(pool, undefined), sql, 'terminated-1', { statementTimeoutMs: 2_000, connectTimeoutMs: 2_000 }, logger);
  try {
    // A connection held across statements (a transaction's, or the instant between a statement's
    // answer and the connection's release): the server's FATAL arrives with no statement running.
    await lease.context.db.connection().execute(async (held) => {
      const row = await held.selectNoFrom((eb) => eb.fn<number>('pg_backend_pid').as('pid')).executeTakeFirstOrThrow();
      const { rows } = await admin.query<{ ended: boolean }>('SELECT pg_terminate_backend($1) AS ended', [row.pid]);
      assert.equal(rows[0]?.ended, true);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([failureLogged, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the failure was never logged')), 10_000)))]);
      clearTimeout(timer);
    });
    assert.ok(warnings.some((message) => /lease connection/.test(message)), `a lease connection failure is logged: ${JSON.stringify(warnings)}`);
    // The pool discarded the broken connection: the next statement opens a new one.
    const again = await lease.context.db.selectNoFrom((eb) => eb.val(1).as('one')).executeTakeFirstOrThrow();
    assert.equal(Number(again.one), 1);
  } finally {
    await lease.close();
  }
});
