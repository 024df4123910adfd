// PostgreSQL itself restarts while tasks wait: the listener reconnects and rescans, and no answer
// or cancel given after the restart is lost. This needs a server of its own to stop, so it starts
// an embedded PostgreSQL (the same module `npm start` uses) instead of the suite's shared one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskNode } from '@mcp-tasks/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../../packages/demo/src/cluster/embedded-postgres.js';
import { startTwoNodes, type TwoNodes } from '../support/two-nodes.js';
import { within } from '../support/within.js';

// Far above what the test waits for: delivery must come from LISTEN/NOTIFY after the reconnect.
const POLL_INTERVAL_MS = 60_000;
const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'restart', clientId: 'client', resource: '' });

describe('a PostgreSQL restart while tasks wait', { timeout: 120_000 }, () => {
  let server: EmbeddedPostgresServer;
  let nodes: TwoNodes | undefined;
  let clusterA: PostgresTaskNode;
  let nodeA: TaskRuntime;
  let nodeB: TaskRuntime;
  let storeB: PostgresTaskStore;

  before(async () => {
    server = await within(startEmbeddedPostgres({ parentDir: path.resolve('.tmp'), name: 'pg-restart', stopOnSignal: true }), 60_000, 'the embedded PostgreSQL to start');
    const listener = { reconnectBaseMs: 50, reconnectMaxMs: 500 };
    nodes = await startTwoNodes(server.url, { pollIntervalMs: POLL_INTERVAL_MS, logger: quiet, a: { listener, logger: quiet }, b: { listener, logger: quiet } });
    ({ a: { cluster: clusterA, runtime: nodeA }, b: { store: storeB, runtime: nodeB } } = nodes);
  });

  // Runs even when the test times out or fails: the embedded server is always stopped.
  after(async () => {
    try {
      await nodes?.close();
    } finally {
      await server?.stop();
    }
  });

  test('an answer and a cancel given through node B after the restart reach the runs on node A', async () => {
    let answered: ((value: unknown) => void) | undefined;
    const answer = new Promise<unknown>((resolve) => (answered = resolve));
    const asking = await bounded(nodeA.start({
      owner: owner(),
      tool: 'ask',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        answered!(await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: {} } }));
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    }));
    let aborted: (() => void) | undefined;
    const abort = new Promise<void>((resolve) => (aborted = resolve));
    const waiting = await bounded(nodeA.start({
      owner: owner(),
      tool: 'wait',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        aborted!();
        return { content: [] };
      },
    }));
    const askRef: TaskRef = { taskId: asking.taskId, owner: asking.owner };
    const waitRef: TaskRef = { taskId: waiting.taskId, owner: waiting.owner };
    await until(async () => (await storeB.get(askRef))?.status === 'input_required');
    await clusterA.listener!.testSignals.listening.waitOnce(5_000);
    clusterA.listener!.testSignals.reconnected.clear();

    await within(server.stopServer(), 30_000, 'the embedded PostgreSQL to stop');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await within(server.startServer(), 30_000, 'the embedded PostgreSQL to start again');
    await clusterA.listener!.testSignals.reconnected.waitOnce(15_000);

    // The pools' connections died with the server: the first queries may fail before pg replaces them.
    await until(async () => (await storeB.get(askRef).catch(() => undefined))?.status === 'input_required');
    const sent = performance.now();
    await within(nodeB.update(askRef, { name: { action: 'accept', content: { name: 'Luca' } } }), 10_000, 'the answer to be written');
    await within(nodeB.cancel(waitRef), 10_000, 'the cancel to be written');
    await within(Promise.all([answer, abort]), 10_000, 'the answer and the cancel to reach node A');
    assert.ok(performance.now() - sent < 5_000, 'delivered through the reconnected listener, not the poll');
    assert.deepEqual(await answer, { action: 'accept', content: { name: 'Luca' } });
    await until(async () => (await storeB.get(askRef))?.status === 'completed');
    assert.equal((await bounded(storeB.get(waitRef)))?.status, 'cancelled');
  });
});

const bounded = <T>(promise: Promise<T>): Promise<T> => within(promise, 10_000, 'a store call');

async function until(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await within(condition(), timeoutMs, 'a read of the task'))) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
