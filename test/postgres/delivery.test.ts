import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { instanceApplicationName, LISTENER_APPLICATION_NAME, PostgresTaskStore, type PostgresTaskNode } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { listeningNode } from '../support/listening-node.js';
import { startTwoNodes, type TwoNodes } from '../support/two-nodes.js';

// The backstop poll is slow on purpose: a signal that arrives well under it came through
// LISTEN/NOTIFY (or the listener's rescan), not through the runtime's poll.
const POLL_INTERVAL_MS = 5_000;
const DELIVERY_BOUND_MS = 1_000;

// The terminations below are expected; their warnings would only clutter the test output.
const quiet = { warn: () => {}, error: () => {} };

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'delivery', clientId: 'client', resource: '' });

/** Resolves with the time the signal fired. */
function abortedAt(signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(performance.now());
    else signal.addEventListener('abort', () => resolve(performance.now()), { once: true });
  });
}

describe('delivery between nodes', () => {
  let database: TestDatabase;
  let nodes: TwoNodes;
  let clusterA: PostgresTaskNode;
  let nodeA: TaskRuntime;
  let nodeB: TaskRuntime;
  let storeB: PostgresTaskStore;
  let admin: pg.Pool;

  before(async () => {
    database = await createTestDatabase();
    nodes = await startTwoNodes(database.url, { pollIntervalMs: POLL_INTERVAL_MS, logger: quiet, a: { listener: { reconnectBaseMs: 50, reconnectMaxMs: 500 }, logger: quiet } });
    ({ a: { cluster: clusterA, runtime: nodeA }, b: { store: storeB, runtime: nodeB } } = nodes);
    // Its idle connection may be terminated with the others a test kills: the helper's pool takes that.
    admin = testPool({ connectionString: database.url, max: 1 });
  });

  after(async () => {
    await nodes?.close();
    await admin?.end();
    await database?.drop();
  });

  /** Starts a task on node A whose tool waits for its signal, and waits until A listens. */
  async function startWaitingTask(): Promise<{ ref: TaskRef; aborted: Promise<number> }> {
    let aborted!: Promise<number>;
    const started = new Promise<void>((resolve) => {
      void nodeA.start({
        owner: owner(),
        tool: 'wait',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          aborted = abortedAt(ctx.signal);
          resolve();
          await aborted;
          return { content: [] };
        },
      }).then((record) => (ref = { taskId: record.taskId, owner: record.owner }));
    });
    let ref!: TaskRef;
    await started;
    await waitUntil(() => ref !== undefined && clusterA.listener!.state === 'listening');
    return { ref, aborted };
  }

  test('a cancel on node B aborts the run on node A through NOTIFY, well before the poll', async () => {
    const { ref, aborted } = await startWaitingTask();
    const sent = performance.now();
    await nodeB.cancel(ref);
    const elapsed = (await aborted) - sent;
    assert.ok(elapsed < DELIVERY_BOUND_MS, `cancel took ${elapsed.toFixed(0)} ms`);
    assert.equal((await storeB.get(ref))?.status, 'cancelled');
  });

  test('an answer given on node B wakes the elicit waiting on node A, well before the poll', async () => {
    let answeredAt = 0;
    const answer = new Promise<unknown>((resolve) => {
      void nodeA
        .start({
          owner: owner(),
          tool: 'ask',
          args: {},
          execute: async (_args: object, ctx: TaskContext) => {
            const response = await ctx.elicit('name', { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } });
            answeredAt = performance.now();
            resolve(response);
            return { content: [{ type: 'text', text: 'ok' }] };
          },
        })
        .then((record) => (ref = { taskId: record.taskId, owner: record.owner }));
    });
    let ref!: TaskRef;
    await waitUntil(() => ref !== undefined);
    await waitUntilAsync(async () => (await storeB.get(ref))?.status === 'input_required');
    await waitUntil(() => clusterA.listener!.state === 'listening');
    const sent = performance.now();
    await nodeB.update(ref, { name: { action: 'accept', content: { name: 'Luca' } } });
    assert.deepEqual(await answer, { action: 'accept', content: { name: 'Luca' } });
    const elapsed = answeredAt - sent;
    assert.ok(elapsed < DELIVERY_BOUND_MS, `answer took ${elapsed.toFixed(0)} ms`);
    await waitUntilAsync(async () => (await storeB.get(ref))?.status === 'completed');
  });

  test('a cancel still reaches node A after its listener backend was terminated (reconnect)', async () => {
    const { ref, aborted } = await startWaitingTask();
    clusterA.listener!.testSignals.reconnected.clear();
    const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
      instanceApplicationName(LISTENER_APPLICATION_NAME, clusterA.identity.instanceId),
    ]);
    assert.ok(killed.rowCount! >= 1);
    await clusterA.listener!.testSignals.reconnected.waitOnce(5_000);
    const sent = performance.now();
    await nodeB.cancel(ref);
    const elapsed = (await aborted) - sent;
    assert.ok(elapsed < DELIVERY_BOUND_MS, `cancel after reconnect took ${elapsed.toFixed(0)} ms`);
  });

  test('a cancel sent while the listener is down is found by the rescan after it reconnects', async () => {
    const { ref, aborted } = await startWaitingTask();
    clusterA.listener!.testSignals.reconnected.clear();
    clusterA.listener!.testSignals.connectionLost.clear();
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
      instanceApplicationName(LISTENER_APPLICATION_NAME, clusterA.identity.instanceId),
    ]);
    await clusterA.listener!.testSignals.connectionLost.waitOnce(5_000);
    const sent = performance.now();
    await nodeB.cancel(ref);
    const elapsed = (await aborted) - sent;
    assert.ok(elapsed < DELIVERY_BOUND_MS, `cancel during reconnect took ${elapsed.toFixed(0)} ms`);
    await clusterA.listener!.testSignals.reconnected.waitOnce(5_000);
  });

  test('the liveness check confirms a healthy listener', async () => {
    const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false });
    const node = await listeningNode(store, { listener: { livenessIntervalMs: 50 } });
    try {
      const unwatch = node.watch('some-task', () => {});
      assert.equal(await node.listener!.testSignals.livenessChecked.waitOnce(5_000), true);
      unwatch();
    } finally {
      await node.stop();
      await store.close();
    }
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function waitUntilAsync(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
