// An abort the runtime itself caused (closing without a drain, a node that lost its lease or could
// not reach the database for a whole lease) is never the tool's outcome: the spec keeps `failed`
// for JSON-RPC errors the tool raised, and what a tool returns on its way out of an abort is not
// its result. The task stays as it is for the lease (or, for a resumable tool, another node) to
// settle. Each case runs on both stores, and with a tool that returns, one that throws its
// signal's reason, and one that reaches for its journal after the abort.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type JsonObject, type TaskContext, type TaskOwner, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { losableNode } from '../../packages/core/test/support/losable-node.js';
import { createTestDatabase } from '../support/database.js';
import { STORE_BACKINGS, type StoreBacking } from '../support/store-backings.js';
import { within } from '../support/within.js';
import { testClient } from '../support/pg-clients.js';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'own-abort', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** How a tool leaves when its signal fires: each is what real tools do. */
const WAYS_OUT: Record<string, (ctx: TaskContext) => Promise<JsonObject>> = {
  'returns what it has': async () => text('Exported 0 of 6 files.'),
  'throws its signal’s reason': async (ctx) => {
    throw ctx.signal.reason;
  },
  'takes one more journaled step': async (ctx) => {
    await ctx.step('after-abort', () => 1);
    return text('unreachable');
  },
};

/** A tool that runs until its signal fires, then leaves the given way; `started` resolves once it runs. */
function abortable(wayOut: (ctx: TaskContext) => Promise<JsonObject>) {
  let started!: () => void;
  let left!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const gone = new Promise<void>((resolve) => (left = resolve));
  const execute = async (_args: object, ctx: TaskContext): Promise<JsonObject> => {
    started();
    try {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      return await wayOut(ctx);
    } finally {
      left();
    }
  };
  return { execute, running, gone };
}

for (const [name, open] of Object.entries(STORE_BACKINGS)) {
  describe(`an abort the runtime caused is not the tool's outcome (${name})`, { timeout: 60_000 }, () => {
    let backing: StoreBacking;
    before(async () => {
      backing = await open();
    });
    after(async () => {
      await backing?.close();
    });
    const events = (): NonNullable<TaskStore['events']> => (backing.node ?? backing.store.events)!;

    for (const [way, wayOut] of Object.entries(WAYS_OUT)) {
      for (const resumable of [false, true]) {
        test(`close without a drain leaves a running task working (a tool that ${way}${resumable ? ', resumable' : ''})`, async () => {
          const rt = new TaskRuntime({ store: backing.store, node: losableNode(events(), `close-${randomUUID()}`), onError: () => {} });
          const tool = abortable(wayOut);
          const record = await rt.start({ owner: owner(), tool: 'work', args: {}, execute: tool.execute, resumable });
          await within(tool.running, 5_000, 'the tool started');
          await rt.close();
          await within(tool.gone, 5_000, 'the tool left');
          // Whatever the run would still write has had its chance: a finish retries within milliseconds.
          await new Promise((resolve) => setTimeout(resolve, 100));
          const task = await backing.store.get({ taskId: record.taskId, owner: record.owner });
          assert.equal(task?.status, 'working', `the task stays as close found it, not ${task?.status} with ${JSON.stringify(task?.error ?? task?.result)}`);
          assert.equal(task?.result, null);
          assert.equal(task?.error, null);
        });
      }

      test(`a node that gives its runs up (its lease lost, or the database out for a whole lease) writes no outcome (a tool that ${way})`, async () => {
        const node = losableNode(events(), `lost-${randomUUID()}`);
        const rt = new TaskRuntime({ store: backing.store, node, onError: () => {} });
        after(() => rt.close());
        const tool = abortable(wayOut);
        const record = await rt.start({ owner: owner(), tool: 'work', args: {}, execute: tool.execute });
        await within(tool.running, 5_000, 'the tool started');
        node.lose(record.taskId);
        await within(tool.gone, 5_000, 'the tool left');
        const deadline = Date.now() + 5_000;
        while (rt.running > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(rt.running, 0, 'the run is over');
        const task = await backing.store.get({ taskId: record.taskId, owner: record.owner });
        assert.equal(task?.status, 'working', `the lease (or the rescuer) settles the task, not the run: ${task?.status} with ${JSON.stringify(task?.error ?? task?.result)}`);
      });
    }
  });
}

describe('a node whose lease is lost (PostgreSQL)', { timeout: 60_000 }, () => {
  test('hands a resumable running task over instead of completing it with what the tool returned on its way out', async () => {
    const database = await createTestDatabase();
    const store = await PostgresTaskStore.connect({ connectionString: database.url });
    const node = await PostgresTaskNode.start(store, { lease: { leaseMs: 60_000 }, reaper: false, sweeper: false, rescuer: false, testSignals: true });
    const admin = testClient({ connectionString: database.url });
    admin.on('error', () => {});
    await admin.connect();
    const rt = new TaskRuntime({ store, node, onError: () => {} });
    try {
      const tool = abortable(WAYS_OUT['returns what it has']!);
      const record = await rt.start({ owner: owner(), tool: 'work', args: {}, execute: tool.execute, resumable: true });
      await within(tool.running, 5_000, 'the tool started');
      await admin.query(`UPDATE mcp_tasks.nodes SET lease_expires_at = now() - interval '1 second' WHERE node_id = $1`, [node.nodeId]);
      await node.lease!.renewOnce();
      await within(tool.gone, 5_000, 'the tool left');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const task = await store.get({ taskId: record.taskId, owner: record.owner });
      assert.deepEqual([task?.status, task?.nodeId, task?.result], ['working', null, null], 'released for any node to resume');
    } finally {
      await rt.close();
      await node.stop();
      await store.close();
      await admin.end();
      await database.drop();
    }
  });
});
