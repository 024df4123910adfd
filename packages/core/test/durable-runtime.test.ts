// Durable work in one process: run capacity, claiming, the step journal and drain hand-over, on
// the memory store (two runtimes on one store stand for two nodes).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { MemoryTaskStore, QUEUED_STATUS_MESSAGE, TaskRuntime, type TaskContext, type TaskOwner, type TaskRecord } from '@mcp-tasks/core';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'durable', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

function gate(): { open: () => void; wait: Promise<void> } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { open, wait };
}

async function settled(store: MemoryTaskStore, record: TaskRecord, timeoutMs = 5_000): Promise<TaskRecord> {
  const started = Date.now();
  for (;;) {
    const task = await store.get(record);
    if (task && task.status !== 'working' && task.status !== 'input_required') return task;
    if (Date.now() - started > timeoutMs) throw new Error(`task still ${task?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('durable work in the runtime', { timeout: 30_000 }, () => {
  test('a task beyond maxConcurrentRuns is committed working with no run, and runs once a slot frees', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, nodeId: 'n1', maxConcurrentRuns: 1, pollIntervalMs: 5_000 });
    t.after(() => rt.close().then(() => store.close()));
    const release = gate();
    const execute = async (args: { n: number }) => {
      if (args.n === 1) await release.wait;
      return text(`ran ${args.n}`);
    };
    rt.registerTool('job', { execute: execute as never, resumable: false });
    const first = await rt.start({ owner: owner(), tool: 'job', args: { n: 1 }, execute });
    const second = await rt.start({ owner: owner(), tool: 'job', args: { n: 2 }, execute });
    const queued = await store.get(second);
    assert.deepEqual([queued?.status, queued?.nodeId, queued?.statusMessage], ['working', null, QUEUED_STATUS_MESSAGE]);
    assert.equal(rt.running, 1);
    release.open();
    assert.equal((await settled(store, first)).result?.['content']?.toString(), text('ran 1').content.toString());
    const done = await settled(store, second);
    assert.deepEqual(done.result, text('ran 2'), 'the stored arguments reach the claimed run');
    assert.deepEqual([done.nodeId, done.attempt], ['n1', 1]);
  });

  test('a tool that is not registered cannot be queued beyond maxConcurrentRuns', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, maxConcurrentRuns: 1 });
    t.after(() => rt.close().then(() => store.close()));
    const hold = gate();
    await rt.start({ owner: owner(), tool: 'solo', args: {}, execute: async () => (await hold.wait, text('x')) });
    await assert.rejects(rt.start({ owner: owner(), tool: 'solo', args: {}, execute: async () => text('y') }), /must be registered/);
    hold.open();
  });

  test('a draining node hands a resumable task over: another node resumes it, finished steps are not run again, the step in flight is redone', async (t) => {
    const store = new MemoryTaskStore();
    const a = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 5_000 });
    const b = new TaskRuntime({ store, nodeId: 'b', pollIntervalMs: 50 });
    t.after(async () => {
      await a.close();
      await b.close();
      await store.close();
    });
    const calls: string[] = [];
    const stuck = gate();
    const execute = async (_args: unknown, ctx: TaskContext) => {
      const one = await ctx.step('one', () => {
        calls.push(`one@${ctx.attempt}`);
        return 1;
      });
      const two = await ctx.step('two', async () => {
        calls.push(`two@${ctx.attempt}`);
        if (ctx.attempt === 1) await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        stuck.open();
        return 2;
      });
      const journal = await ctx.journal();
      return text(`${one + two} after ${ctx.attempt} runs; ${journal.map((step) => `${step.name}:${step.starts}`).join(',')}`);
    };
    const record = await a.start({ owner: owner(), tool: 'steps', args: {}, execute, resumable: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await a.drain(50);
    const handed = await store.get(record);
    assert.deepEqual([handed?.status, handed?.nodeId, handed?.handovers], ['working', null, 1], 'the drain released the task instead of failing it');
    b.registerTool('steps', { execute: execute as never, resumable: true });
    const done = await settled(store, record);
    assert.deepEqual(done.result, text('3 after 2 runs; one:1,two:2'));
    assert.deepEqual(calls, ['one@1', 'two@1', 'two@2']);
    assert.equal(done.nodeId, 'b');
  });

  test('a draining node still fails a task that is not resumable', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, nodeId: 'a' });
    t.after(() => store.close());
    const record = await rt.start({
      owner: owner(),
      tool: 'plain',
      args: {},
      execute: (_args, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    });
    await rt.drain(20);
    const task = await store.get(record);
    assert.equal(task?.status, 'failed');
    assert.equal(task?.error?.message, 'The server shut down before the task finished');
  });
});
