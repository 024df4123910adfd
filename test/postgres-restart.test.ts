// PostgreSQL itself restarts while tasks wait: the listener reconnects and rescans, and no answer
// or cancel given after the restart is lost. This needs a server of its own to stop, so it starts
// an embedded PostgreSQL (the same module `npm start` uses) instead of the suite's shared one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskNode } from '@mcp-tasks/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../packages/demo/src/cluster/embedded-postgres.js';
import { listeningNode } from './support/listening-node.js';

// Far above what the test waits for: delivery must come from LISTEN/NOTIFY after the reconnect.
const POLL_INTERVAL_MS = 60_000;
const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'restart', clientId: 'client', resource: '' });

describe('a PostgreSQL restart while tasks wait', () => {
  let server: EmbeddedPostgresServer;
  let storeA: PostgresTaskStore;
  let storeB: PostgresTaskStore;
  let clusterA: PostgresTaskNode;
  let clusterB: PostgresTaskNode;
  let nodeA: TaskRuntime;
  let nodeB: TaskRuntime;

  before(async () => {
    server = await startEmbeddedPostgres({ parentDir: path.resolve('.tmp'), name: 'pg-restart' });
    const listener = { reconnectBaseMs: 50, reconnectMaxMs: 500 };
    storeA = await PostgresTaskStore.connect({ connectionString: server.url, logger: quiet });
    clusterA = await listeningNode(storeA, { nodeId: 'node-a', listener, logger: quiet });
    storeB = await PostgresTaskStore.connect({ connectionString: server.url, logger: quiet });
    clusterB = await listeningNode(storeB, { nodeId: 'node-b', logger: quiet });
    nodeA = new TaskRuntime({ store: storeA, node: clusterA, pollIntervalMs: POLL_INTERVAL_MS, onError: () => {} });
    nodeB = new TaskRuntime({ store: storeB, node: clusterB, pollIntervalMs: POLL_INTERVAL_MS, onError: () => {} });
  });

  after(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await clusterA?.stop();
    await clusterB?.stop();
    await storeA?.close();
    await storeB?.close();
    await server?.stop();
  });

  test('an answer and a cancel given through node B after the restart reach the runs on node A', async () => {
    let answered: ((value: unknown) => void) | undefined;
    const answer = new Promise<unknown>((resolve) => (answered = resolve));
    const asking = await nodeA.start({
      owner: owner(),
      tool: 'ask',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        answered!(await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: {} } }));
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    });
    let aborted: (() => void) | undefined;
    const abort = new Promise<void>((resolve) => (aborted = resolve));
    const waiting = await nodeA.start({
      owner: owner(),
      tool: 'wait',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        aborted!();
        return { content: [] };
      },
    });
    const askRef: TaskRef = { taskId: asking.taskId, owner: asking.owner };
    const waitRef: TaskRef = { taskId: waiting.taskId, owner: waiting.owner };
    await until(async () => (await storeB.get(askRef))?.status === 'input_required');
    await clusterA.listener!.testSignals.listening.waitOnce(5_000);
    clusterA.listener!.testSignals.reconnected.clear();

    await server.stopServer();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await server.startServer();
    await clusterA.listener!.testSignals.reconnected.waitOnce(15_000);

    // The pools' connections died with the server: the first queries may fail before pg replaces them.
    await until(async () => (await storeB.get(askRef).catch(() => undefined))?.status === 'input_required');
    const sent = performance.now();
    await nodeB.update(askRef, { name: { action: 'accept', content: { name: 'Luca' } } });
    await nodeB.cancel(waitRef);
    await Promise.all([answer, abort]);
    assert.ok(performance.now() - sent < 5_000, 'delivered through the reconnected listener, not the poll');
    assert.deepEqual(await answer, { action: 'accept', content: { name: 'Luca' } });
    await until(async () => (await storeB.get(askRef))?.status === 'completed');
    assert.equal((await storeB.get(waitRef))?.status, 'cancelled');
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
