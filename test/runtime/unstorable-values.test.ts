// A value no store can hold (a lone UTF-16 surrogate is not Unicode text; PostgreSQL's jsonb
// refuses it) never leaves a task `working`: a result or error that cannot be stored ends the task
// `failed` with a clear error, and a progress message is stored with U+FFFD in its place. The same
// on both stores.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { JsonRpcError, TaskRuntime, type TaskContext, type TaskExecute, type TaskOwner, type TaskRecord } from '@mcp-tasks/core';
import { STORE_BACKINGS, type StoreBacking } from '../support/store-backings.js';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'unstorable', clientId: 'client', resource: '' });
const LONE = 'x\ud800y';

for (const [name, open] of Object.entries(STORE_BACKINGS)) {
  describe(`values no store can hold (${name})`, { timeout: 60_000 }, () => {
    let backing: StoreBacking;
    let rt: TaskRuntime;
    before(async () => {
      backing = await open();
      rt = new TaskRuntime({ store: backing.store, ...(backing.node ? { node: backing.node } : {}), pollIntervalMs: 100, onError: () => {} });
    });
    after(async () => {
      await rt?.close();
      await backing?.close();
    });

    async function runToEnd(execute: TaskExecute<object>): Promise<TaskRecord> {
      const record = await rt.start({ owner: owner(), tool: 'tool', args: {}, execute });
      const ref = { taskId: record.taskId, owner: record.owner };
      // Far under the TTL a stranded task would wait for.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const task = await backing.store.get(ref);
        if (task && task.status !== 'working' && task.status !== 'input_required') return task;
        if (Date.now() > deadline) throw new Error(`task still ${task?.status} after 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    test('a result with a lone surrogate ends the task failed and says why', async () => {
      const task = await runToEnd(async () => ({ content: [{ type: 'text', text: LONE }] }));
      assert.equal(task.status, 'failed');
      assert.equal(task.error?.code, -32603);
      assert.match(task.error!.message, /^The tool returned an invalid result: .*lone UTF-16 surrogate/);
      assert.equal(task.statusMessage, task.error!.message);
    });

    test('a JSON-RPC error whose message holds a lone surrogate ends the task failed, not working', async () => {
      const task = await runToEnd(async () => {
        throw new JsonRpcError(-32000, LONE, { detail: LONE });
      });
      assert.equal(task.status, 'failed');
      assert.equal(task.error?.code, -32603);
      assert.match(task.error!.message, /error that cannot be stored: .*lone UTF-16 surrogate/);
    });

    test('a progress message with a lone surrogate is stored with U+FFFD and the run goes on', async () => {
      const task = await runToEnd(async (_args: object, ctx: TaskContext) => {
        await ctx.progress(1, 1, LONE);
        return { content: [{ type: 'text', text: 'done' }] };
      });
      assert.equal(task.status, 'completed');
      assert.equal(task.statusMessage, 'x\ufffdy');
    });
  });
}
