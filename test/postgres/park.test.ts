// Parking on PostgreSQL: the answer that makes a parked task working again announces it to the
// nodes as claimable, in the same statement; an answer that leaves it waiting, or one to a task a
// run still holds, announces no claim.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { controlChannelOf, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testClient } from '../support/pg-clients.js';

const REQUEST = { method: 'elicitation/create', params: { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } } } as const;
const YES = { action: 'accept', content: {} } as const;

let database: TestDatabase;
let store: PostgresTaskStore;
let listener: pg.Client;
const claimable: string[] = [];

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url, poolSize: 2 });
  listener = testClient({ connectionString: database.url });
  await listener.connect();
  listener.on('notification', (message) => {
    const payload = JSON.parse(message.payload ?? '{}') as { op?: string; taskId?: string };
    if (payload.op === 'claimable' && payload.taskId) claimable.push(payload.taskId);
  });
  await listener.query(`LISTEN ${listener.escapeIdentifier(controlChannelOf('mcp_tasks'))}`);
});

after(async () => {
  await listener?.end();
  await store?.close();
  await database?.drop();
});

async function waitingTask(keys: readonly string[], park: boolean) {
  const owner: TaskOwner = { subject: `user-${randomUUID()}`, server: 'park', clientId: 'client', resource: '' };
  const task = await store.create({ taskId: newTaskId(), owner, tool: 'ask', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'runner', resumable: true }, { maxLive: Infinity });
  const ref = { taskId: task.taskId, owner };
  const claim = { nodeId: 'runner', attempt: task.attempt };
  for (const key of keys) assert.equal((await store.requestInput(ref, key, REQUEST, claim)).state, 'pending');
  if (park) assert.equal(await store.park(ref, claim, keys[0]!), true);
  return ref;
}

/** Whether `taskId` was announced as claimable, given a marker notification sent after it. */
async function announced(taskId: string): Promise<boolean> {
  const marker = `marker-${randomUUID()}`;
  await listener.query(`SELECT pg_notify($1, json_build_object('op', 'claimable', 'taskId', $2::text)::text)`, [controlChannelOf('mcp_tasks'), marker]);
  // Notifications arrive in commit order: once the marker is in, anything before it is too.
  for (const deadline = Date.now() + 5_000; !claimable.includes(marker); ) {
    assert.ok(Date.now() < deadline, 'the marker notification arrives');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return claimable.includes(taskId);
}

test('the answer that returns a parked task to working announces it as claimable', async () => {
  const ref = await waitingTask(['a'], true);
  await store.answerInput(ref, { a: YES });
  assert.equal(await announced(ref.taskId), true);
});

test('a partial answer to a parked task announces no claim', async () => {
  const ref = await waitingTask(['a', 'b'], true);
  await store.answerInput(ref, { a: YES });
  assert.equal(await announced(ref.taskId), false);
  await store.answerInput(ref, { b: YES });
  assert.equal(await announced(ref.taskId), true, 'the last answer does');
});

test('an answer to a task its run still holds announces no claim', async () => {
  const ref = await waitingTask(['a'], false);
  await store.answerInput(ref, { a: YES });
  assert.equal(await announced(ref.taskId), false);
});
