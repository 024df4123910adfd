import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { InvalidTaskValueError, newTaskId, type InputRequest, type NewTask, type TaskOwner } from '@mcp-tasks/core';
import { ControlListener, PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let store: PostgresTaskStore;

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url });
});

after(async () => {
  await store.close();
  await database.drop();
});

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'pg', clientId: '', resource: '' });
const task = (o: TaskOwner = owner()): NewTask => ({ taskId: newTaskId(), owner: o, tool: 'export', scopes: ['a', 'b'], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'n' });
const ROOTS: InputRequest = { method: 'roots/list', params: {} };

test('a NUL character PostgreSQL cannot store is refused with the typed error and writes nothing', async () => {
  const t = task();
  await assert.rejects(store.create({ ...t, owner: { ...t.owner, subject: 'a\u0000b' } }, { maxLive: 5 }), InvalidTaskValueError);
  await store.create(t, { maxLive: Infinity });
  await assert.rejects(store.finish(t, { status: 'completed', result: { text: 'a\u0000b' } }), InvalidTaskValueError);
  await assert.rejects(store.setStatusMessage(t, 'x\u0000'), InvalidTaskValueError);
  const read = await store.get(t);
  assert.equal(read?.status, 'working');
  assert.equal(read?.statusMessage, null);
});

test('input keys keep the order they were asked in, which jsonb alone would not', async () => {
  const t = task();
  await store.create(t, { maxLive: Infinity });
  const keys = ['zz-a-long-key', 'b', 'mid-key', 'a'];
  for (const key of keys) await store.requestInput(t, key, ROOTS);
  assert.deepEqual(Object.keys((await store.get(t))!.inputs), keys);
  assert.deepEqual((await store.controlStates([t])).get(t.taskId)?.outstandingKeys, keys);
  await store.answerInput(t, { b: { roots: [] } });
  assert.deepEqual((await store.controlStates([t])).get(t.taskId)?.outstandingKeys, ['zz-a-long-key', 'mid-key', 'a']);
});

test('timestamps come from the database clock at millisecond precision', async () => {
  const t = task();
  const created = await store.create({ ...t, ttlMs: 9_000_000_000_000 }, { maxLive: Infinity });
  assert.equal(created.createdAt.getTime(), created.lastUpdatedAt.getTime());
  assert.equal(created.expiresAt!.getTime() - created.createdAt.getTime(), 9_000_000_000_000);
  assert.ok(Math.abs(created.createdAt.getTime() - Date.now()) < 60_000);
});

test('when the self-test NOTIFY never comes back (a transaction pooler), the listener warns once and stays off', async () => {
  const warnings: string[] = [];
  const listener = new ControlListener(
    { connectionString: database.url },
    'mcp_tasks_control',
    {
      onMessage: () => {},
      onListening: () => assert.fail('a listener that failed its self-test must not report listening'),
      // What a transaction pooler does to LISTEN: the notification goes to another backend.
      notify: async () => {},
      logger: { warn: (message) => warnings.push(message), error: () => {} },
    },
    { selfTestTimeoutMs: 100 },
  );
  try {
    listener.start();
    await listener.testSignals.selfTestFailed.waitOnce(5_000);
    assert.equal(listener.state, 'polling-only');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /self-test failed/);
  } finally {
    await listener.stop();
  }
});

test('listener configuration is validated at construction', () => {
  const hooks = { onMessage: () => {}, onListening: () => {}, notify: async () => {}, logger: { warn: () => {}, error: () => {} } };
  assert.throws(() => new ControlListener({}, 'c', hooks, { livenessIntervalMs: 0 }), RangeError);
  assert.throws(() => new ControlListener({}, 'c', hooks, { reconnectBaseMs: 500, reconnectMaxMs: 100 }), RangeError);
});
