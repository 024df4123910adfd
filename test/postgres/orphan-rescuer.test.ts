// A task must never stay live with no run and nothing that will start one: the orphan rescuer of
// each node fails its own node's live tasks that no run of its runtime holds, such as a task
// whose outcome could never be written.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { orphanErrorText, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FlakyTaskStore } from '../support/flaky-task-store.js';
import { within } from '../support/within.js';
import { listeningNode } from '../support/listening-node.js';
import { testClient } from '../support/pg-clients.js';

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

  test('a task queued longer than the grace and just claimed is not rescued before its run registers: the grace counts from the claim', async (t) => {
    // Built, not started: the rounds below are the only ones; its registry holds nothing, as the
    // runtime's does between a claim's commit and the run's registration.
    const claimer = new PostgresTaskNode(store, { nodeId: 'node-claimer', logger: quiet, listener: false, lease: false, reaper: false, sweeper: false, rescuer: { graceMs: GRACE_MS } });
    t.after(() => claimer.stop());
    claimer.attachRuns({ holds: () => false });
    const queued = await store.create(
      { taskId: `t${randomUUID().replaceAll('-', '')}`, owner: owner(), tool: 'queued-tool', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: null },
      { maxLive: Infinity },
    );
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
    const claimed = await store.claim(claimer.nodeId, ['queued-tool']);
    assert.equal(claimed?.taskId, queued.taskId);
    const round = await within(claimer.rescuer!.runOnce(), 5_000, 'a rescue round');
    assert.equal(round.rescued, 0, 'a task claimed within the grace is not an orphan yet');
    assert.equal((await store.get(queued))?.status, 'working');
    // Past the grace from the claim, with still no run holding it, it is one.
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
    assert.equal((await within(claimer.rescuer!.runOnce(), 5_000, 'a later round')).rescued, 1);
    assert.equal((await store.get(queued))?.status, 'failed');
  });

  test('a task claimed again between a round\'s read and its update is not failed: the attempt is in the predicate', async (t) => {
    const rescuing = new PostgresTaskNode(store, { nodeId: 'node-interleaved', logger: quiet, listener: false, lease: false, reaper: false, sweeper: false, rescuer: { graceMs: 0 } });
    t.after(() => rescuing.stop());
    rescuing.attachRuns({ holds: () => false });
    const task = await store.create(
      { taskId: `t${randomUUID().replaceAll('-', '')}`, owner: owner(), tool: 'x', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: rescuing.nodeId },
      { maxLive: Infinity },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The row is locked, so the round reads it (attempt 1, no run holds it) and its UPDATE waits;
    // meanwhile the task is released and claimed again by the same node (attempt 2, a new run).
    const blocker = testClient({ connectionString: database.url });
    blocker.on('error', () => {});
    await blocker.connect();
    t.after(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM mcp_tasks.tasks WHERE id = $1 FOR UPDATE', [task.taskId]);
    const round = rescuing.rescuer!.runOnce();
    const started = Date.now();
    for (;;) {
      // pg_stat_activity is read once per transaction unless its snapshot is cleared.
      await blocker.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await blocker.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE%' AND pid <> pg_backend_pid()",
      );
      if (rows.length > 0) break;
      if (Date.now() - started > 5_000) throw new Error(`the round's UPDATE never waited on the row (it ended: ${JSON.stringify(await Promise.race([round, 'pending']))})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await blocker.query('UPDATE mcp_tasks.tasks SET attempt = attempt + 1, last_updated_at = now() WHERE id = $1', [task.taskId]);
    await blocker.query('COMMIT');
    const result = await within(round, 5_000, 'the interleaved round');
    assert.equal(result.rescued, 0, 'the run of attempt 2 keeps its task');
    const after = await store.get(task);
    assert.deepEqual([after?.status, after?.nodeId], ['working', rescuing.nodeId]);
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
