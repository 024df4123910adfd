// A task must never stay live with no run and nothing that will start one: the orphan rescuer of
// each node fails its own node's live tasks that no run of its runtime holds, such as a task
// whose outcome could never be written.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { orphanErrorText, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { FlakyTaskStore } from './support/flaky-task-store.js';
import { within } from './support/within.js';
import { listeningNode } from './support/listening-node.js';

const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'rescue', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const GRACE_MS = 300;

describe('the orphan rescuer', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let store: PostgresTaskStore;
  let node: PostgresTaskNode;
  let flaky: FlakyTaskStore;
  let rt: TaskRuntime;

  before(async () => {
    database = await createTestDatabase();
    store = await PostgresTaskStore.connect({ connectionString: database.url, logger: quiet });
    node = await listeningNode(store, { nodeId: 'node-r', logger: quiet, rescuer: { intervalMs: 250, graceMs: GRACE_MS } });
    flaky = new FlakyTaskStore(store);
    rt = new TaskRuntime({ store: flaky, node, pollIntervalMs: 60_000, onError: () => {} });
  });

  after(async () => {
    await rt?.close();
    await node?.stop();
    await store?.close();
    await database?.drop();
  });

  async function statusWithin(ref: TaskRef, status: string, ms: number): Promise<number> {
    const started = Date.now();
    while ((await store.get(ref))?.status !== status) {
      if (Date.now() - started > ms) throw new Error(`task not ${status} within ${ms} ms (is ${(await store.get(ref))?.status})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return Date.now() - started;
  }

  test('a task whose outcome can never be written ends failed within a bound, not at its TTL', async () => {
    flaky.fail('finish');
    try {
      const record = await rt.start({ owner: owner(), tool: 'quick', args: {}, execute: async () => text('done') });
      const ref = { taskId: record.taskId, owner: record.owner };
      // The runtime retries the write for about 5 s, then gives up; a rescue round follows.
      await statusWithin(ref, 'failed', 15_000);
      const task = await store.get(ref);
      assert.deepEqual(task?.error, { code: -32603, message: orphanErrorText(node.nodeId) });
      assert.equal(task?.statusMessage, orphanErrorText(node.nodeId));
      assert.ok((flaky.failures.get('finish') ?? 0) >= 2, 'the runtime tried to write the outcome');
    } finally {
      flaky.heal();
    }
  });

  test('a task a run still holds is never rescued, however long it runs', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const record = await rt.start({
      owner: owner(),
      tool: 'slow',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        await ctx.progress(1, 2);
        await gate;
        return text('finished');
      },
    });
    const ref = { taskId: record.taskId, owner: record.owner };
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
    node.rescuer!.testSignals.rescued.clear();
    const round = await within(node.rescuer!.testSignals.rescued.waitOnce(5_000), 6_000, 'a rescue round');
    assert.equal(round.ran, true);
    assert.equal(round.rescued, 0);
    assert.equal((await store.get(ref))?.status, 'working');
    release();
    await statusWithin(ref, 'completed', 5_000);
  });

  test('with no runtime attached a node rescues nothing: nobody can tell which tasks are held', async (t) => {
    // Built, not started: the round below is the only one.
    const other = new PostgresTaskNode(store, { nodeId: 'node-unattached', logger: quiet, listener: false, lease: false, reaper: false, sweeper: false, rescuer: { graceMs: 0 } });
    t.after(() => other.stop());
    const task = await store.create(
      { taskId: `t${randomUUID().replaceAll('-', '')}`, owner: owner(), tool: 'x', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'node-unattached' },
      { maxLive: Infinity },
    );
    const round = await within(other.rescuer!.runOnce(), 5_000, 'a rescue round');
    assert.equal(round.ran, false);
    assert.equal((await store.get(task))?.status, 'working');
  });

  test('a resumable task that no run on its node holds is released for any node to claim, not failed', async () => {
    const task = await store.create(
      { taskId: `t${randomUUID().replaceAll('-', '')}`, owner: owner(), tool: 'x', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: node.nodeId, resumable: true },
      { maxLive: Infinity },
    );
    const started = Date.now();
    while ((await store.get(task))?.nodeId !== null) {
      if (Date.now() - started > 5_000) throw new Error(`not released within 5 s: ${JSON.stringify(await store.get(task))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const released = await store.get(task);
    assert.deepEqual([released?.status, released?.nodeId], ['working', null]);
    assert.equal(released?.statusMessage, `Resuming: ${orphanErrorText(node.nodeId)}`);
  });
});
