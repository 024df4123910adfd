import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

const quiet = { warn: () => {}, error: () => {} };
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase();
  await (await PostgresTaskStore.connect({ connectionString: database.url })).close();
});

after(async () => {
  await database.drop();
});

test('the lease renews while request traffic holds every connection of the store\'s pool', { timeout: 30_000 }, async () => {
  const pool = testPool({ connectionString: database.url, max: 2 });
  const store = await PostgresTaskStore.connect({ pool, migrate: false, logger: quiet });
  const node = await PostgresTaskNode.start(store, { nodeId: 'n-starved', logger: quiet, testSignals: true, listener: false, reaper: false, sweeper: false, lease: { leaseMs: 1_500 } });
  const hogs: Promise<unknown>[] = [];
  try {
    await node.lease!.testSignals.renewed.waitOnce(2_000);
    // Every pool connection busy for longer than the lease, the way a flood of requests holds them.
    for (let i = 0; i < 2; i += 1) hogs.push(pool.query('SELECT pg_sleep(3)'));
    node.lease!.testSignals.renewed.clear();
    for (let i = 0; i < 3; i += 1) await node.lease!.testSignals.renewed.waitOnce(1_000);
    assert.equal(node.lease!.state, 'held');
    await assert.rejects(node.lease!.testSignals.lost.waitOnce(50), /not received/);
  } finally {
    await Promise.allSettled(hogs);
    await node.stop();
    await store.close();
    await pool.end();
  }
});
