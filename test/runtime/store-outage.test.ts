// A store that fails for a while (PostgreSQL restarting, a dropped pool connection) is no news to
// a waiting or running task: the run keeps waiting and reads again, and an answer accepted
// meanwhile reaches the tool. Each case runs on both stores, through a wrapper that fails the
// chosen reads on demand, so the outage lands exactly where the test puts it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef, type TaskStore } from '@mcp-tasks/core';
import { FlakyTaskStore } from '../support/flaky-task-store.js';
import { STORE_BACKINGS, type StoreBacking } from '../support/store-backings.js';
import { within } from '../support/within.js';

// Far above the test's bounds: what heals the run is its own retry, not the backstop poll.
const POLL_INTERVAL_MS = 60_000;
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'outage', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

for (const [name, open] of Object.entries(STORE_BACKINGS)) {
  describe(`a store outage during a run (${name})`, { timeout: 60_000 }, () => {
    let backing: StoreBacking;
    before(async () => {
      backing = await open();
    });
    after(async () => {
      await backing?.close();
    });

    async function node(): Promise<{ flaky: FlakyTaskStore; rt: TaskRuntime; errors: unknown[] }> {
      const flaky = new FlakyTaskStore(backing.store);
      const errors: unknown[] = [];
      const rt = new TaskRuntime({ store: flaky, ...(backing.node ? { node: backing.node } : {}), pollIntervalMs: POLL_INTERVAL_MS, onError: (error) => errors.push(error) });
      after(() => rt.close());
      return { flaky, rt, errors };
    }

    async function until(store: TaskStore, ref: TaskRef, status: string): Promise<void> {
      const deadline = Date.now() + 10_000;
      while ((await store.get(ref))?.status !== status) {
        if (Date.now() > deadline) throw new Error(`task never became ${status}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    test('a failed re-read during an input wait is no news: the answer accepted meanwhile reaches the tool', async () => {
      const { flaky, rt } = await node();
      const record = await rt.start({
        owner: owner(),
        tool: 'ask',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          const answer = await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: {} } });
          return text(JSON.stringify(answer));
        },
      });
      const ref = { taskId: record.taskId, owner: record.owner };
      await until(backing.store, ref, 'input_required');
      // The wake that the answer causes lands in an outage: the first re-reads fail.
      flaky.fail('readInput', 3);
      await rt.update(ref, { name: { action: 'accept', content: { name: 'Luca' } } });
      await until(backing.store, ref, 'completed');
      const task = await backing.store.get(ref);
      assert.equal(flaky.failures.get('readInput'), 3);
      assert.deepEqual(task?.result?.['content'], [{ type: 'text', text: JSON.stringify({ action: 'accept', content: { name: 'Luca' } }) }]);
    });

    test('an input request that fails to reach the store is asked again while the run lives', async () => {
      const { flaky, rt } = await node();
      flaky.fail('requestInput', 2);
      const record = await rt.start({
        owner: owner(),
        tool: 'ask',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          const answer = await ctx.elicit('ok', { message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
          return text(answer.action);
        },
      });
      const ref = { taskId: record.taskId, owner: record.owner };
      await until(backing.store, ref, 'input_required');
      assert.equal(flaky.failures.get('requestInput'), 2);
      await rt.update(ref, { ok: { action: 'decline' } });
      await until(backing.store, ref, 'completed');
      assert.deepEqual((await backing.store.get(ref))?.result?.['content'], [{ type: 'text', text: 'decline' }]);
    });

    test('a cancel during an outage still ends the wait', async () => {
      const { flaky, rt } = await node();
      let settled!: (value: string) => void;
      const outcome = new Promise<string>((resolve) => (settled = resolve));
      flaky.fail('requestInput');
      const record = await rt.start({
        owner: owner(),
        tool: 'ask',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          settled((await ctx.elicit('ok', { message: 'Go?', requestedSchema: { type: 'object', properties: {} } })).action);
          return text('done');
        },
      });
      const ref = { taskId: record.taskId, owner: record.owner };
      while ((flaky.failures.get('requestInput') ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      await rt.cancel(ref);
      assert.equal(await within(outcome, 5_000, 'the cancelled wait to end'), 'cancel');
      assert.equal((await backing.store.get(ref))?.status, 'cancelled');
    });

    test('a failed progress write neither throws out of ctx.progress nor ends the run', async () => {
      const { flaky, rt, errors } = await node();
      flaky.fail('setStatusMessage', 1);
      const record = await rt.start({
        owner: owner(),
        tool: 'count',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          await ctx.progress(1, 2);
          await ctx.progress(2, 2);
          return text(ctx.cancelled() ? 'cancelled' : 'counted');
        },
      });
      const ref = { taskId: record.taskId, owner: record.owner };
      await until(backing.store, ref, 'completed');
      const task = await backing.store.get(ref);
      assert.deepEqual(task?.result?.['content'], [{ type: 'text', text: 'counted' }]);
      assert.equal(task?.statusMessage, '2/2');
      assert.equal(errors.length, 1, 'the lost write is reported to onError');
    });

    test('an input request that is the tool’s own mistake still reaches the tool as an error', async () => {
      const { rt } = await node();
      const record = await rt.start({
        owner: owner(),
        tool: 'ask',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          try {
            await ctx.elicit('bad', { message: 'Go?', requestedSchema: { type: 'object', properties: {} }, extra: () => {} } as never);
            return text('asked');
          } catch (error) {
            return text(`refused: ${(error as Error).name}`);
          }
        },
      });
      const ref = { taskId: record.taskId, owner: record.owner };
      await until(backing.store, ref, 'completed');
      assert.deepEqual((await backing.store.get(ref))?.result?.['content'], [{ type: 'text', text: 'refused: InvalidTaskValueError' }]);
    });
  });
}
