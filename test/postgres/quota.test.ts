import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { QuotaExceededError, newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testClient } from '../support/pg-clients.js';

const CREATORS = 64;
const POOLS = 4;
const MAX_LIVE = 10;

let database: TestDatabase;
let stores: PostgresTaskStore[];

before(async () => {
  database = await createTestDatabase();
  stores = [];
  // Several pools, as several nodes would have: the limit must hold across connections, not
  // just within one pool's queue. 8 connections each keeps the file within a default
  // max_connections of 100 while other files run alongside.
  for (let i = 0; i < POOLS; i += 1) {
    stores.push(await PostgresTaskStore.connect({ connectionString: database.url, poolSize: 8 }));
  }
});

after(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await database.drop();
});

test(`${CREATORS} concurrent creations for one owner across ${POOLS} pools create exactly maxLive tasks`, async () => {
  const owner: TaskOwner = { subject: `user-${randomUUID()}`, server: 'quota', clientId: 'client', resource: '' };
  const attempts = await Promise.allSettled(
    Array.from({ length: CREATORS }, (_, i) =>
      stores[i % POOLS]!.create(
        { taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: `node-${i % POOLS}` },
        { maxLive: MAX_LIVE },
      ),
    ),
  );
  const created = attempts.filter((attempt) => attempt.status === 'fulfilled');
  const refused = attempts.filter((attempt) => attempt.status === 'rejected');
  assert.equal(created.length, MAX_LIVE);
  for (const attempt of refused) assert.ok(attempt.reason instanceof QuotaExceededError, String(attempt.reason));

  const client = testClient({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ live: number }>(
      `SELECT count(*)::int AS live FROM mcp_tasks.tasks WHERE owner_subject = $1 AND status IN ('working', 'input_required')`,
      [owner.subject],
    );
    assert.equal(rows[0]?.live, MAX_LIVE);
  } finally {
    await client.end();
  }
});

test('the quota counts only the owner: other owners create freely while one is at its limit', async () => {
  const owner: TaskOwner = { subject: `user-${randomUUID()}`, server: 'quota', clientId: 'client', resource: '' };
  const store = stores[0]!;
  const task = () => ({ taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: null });
  await store.create(task(), { maxLive: 1 });
  await assert.rejects(store.create(task(), { maxLive: 1 }), QuotaExceededError);
  const other = { ...owner, subject: `user-${randomUUID()}` };
  await store.create({ ...task(), owner: other }, { maxLive: 1 });
});
