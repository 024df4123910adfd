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

/** `store`'s claims held until `answer()`: how many were asked meanwhile. */
function heldClaims(store: MemoryTaskStore): { readonly asked: number; answer: () => void } {
  const answered = gate();
  let asked = 0;
  const claim = store.claim.bind(store);
  store.claim = async (...args: Parameters<MemoryTaskStore['claim']>) => {
    asked += 1;
    await answered.wait;
    return claim(...args);
  };
  return {
    get asked() {
      return asked;
    },
    answer: answered.open,
  };
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

async function eventually(store: MemoryTaskStore, record: TaskRecord, check: (task: TaskRecord) => boolean, timeoutMs = 5_000): Promise<TaskRecord> {
  const started = Date.now();
  for (;;) {
    const task = await store.get(record);
    if (task && check(task)) return task;
    if (Date.now() - started > timeoutMs) throw new Error(`task not as expected after ${timeoutMs} ms: ${JSON.stringify(task)}`);
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

  test('a task started while a claim is in flight waits for the slot the claim takes: the node never runs more than maxConcurrentRuns', async (t) => {
    const store = new MemoryTaskStore();
    // The claim's query is slow (a loaded database): a request that starts a task meanwhile must
    // not take the slot the claim is about to fill.
    const claims = heldClaims(store);
    const rt = new TaskRuntime({ store, nodeId: 'n1', maxConcurrentRuns: 1, pollIntervalMs: 5_000 });
    t.after(() => rt.close().then(() => store.close()));
    const finish = gate();
    let running = 0;
    let most = 0;
    const execute = async () => {
      running += 1;
      most = Math.max(most, running);
      await finish.wait;
      running -= 1;
      return text('done');
    };
    // A task queued by another node, which this node's claimer goes for as soon as the tool is registered.
    const elsewhere = await store.create(
      { taskId: randomUUID(), owner: owner(), tool: 'job', scopes: [], ttlMs: 60_000, pollIntervalMs: 100, nodeId: null, args: null, clientCapabilities: null, resumable: false, maxAttempts: 3 },
      { maxLive: Infinity },
    );
    rt.registerTool('job', { execute: execute as never, resumable: false });
    assert.equal(claims.asked, 1, 'the claim is in flight');
    // The start waits for the claim's answer: the claim takes the slot, so the start queues.
    const starting = rt.start({ owner: owner(), tool: 'job', args: {}, execute });
    claims.answer();
    const local = await starting;
    assert.equal(local.nodeId, null, 'queued: the claim took the one slot');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(rt.running <= 1, `the node runs ${rt.running} tasks with one slot`);
    finish.open();
    const [a, b] = await Promise.all([settled(store, elsewhere), settled(store, local)]);
    assert.deepEqual([a.status, b.status], ['completed', 'completed']);
    assert.equal(most, 1, 'never two runs at once');
  });

  test('a task started while a claim that finds nothing is in flight runs at once: the slot was only the claim\'s for its query', async (t) => {
    const store = new MemoryTaskStore();
    const claims = heldClaims(store);
    const rt = new TaskRuntime({ store, nodeId: 'n1', maxConcurrentRuns: 1, pollIntervalMs: 5_000 });
    t.after(() => rt.close().then(() => store.close()));
    const execute = async () => text('done');
    // Nothing is queued anywhere: the claim the registration starts finds nothing.
    rt.registerTool('job', { execute: execute as never, resumable: false });
    assert.equal(claims.asked, 1, 'the claim is in flight');
    const starting = rt.start({ owner: owner(), tool: 'job', args: {}, execute });
    claims.answer();
    const local = await starting;
    assert.equal(local.nodeId, 'n1', 'run here at once, not queued behind the claim');
    assert.equal(local.attempt, 1);
    assert.equal((await settled(store, local)).status, 'completed');
  });

  test('a claimed run gets what the creating request carried, its input still checked against what the client declared, and unchecked when the capabilities were unknown', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, nodeId: 'n1', maxConcurrentRuns: 1, pollIntervalMs: 5_000 });
    t.after(() => rt.close().then(() => store.close()));
    const release = gate();
    const hold = async () => {
      await release.wait;
      return text('held');
    };
    const carriedSeen: unknown[] = [];
    const ask = async (_args: unknown, ctx: TaskContext, carried?: unknown) => {
      carriedSeen.push(carried);
      const answer = await ctx.elicit('go', { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } } } });
      return text(answer.action);
    };
    rt.registerTool('hold', { execute: hold as never, resumable: false });
    rt.registerTool('ask', { execute: ask as never, resumable: false });
    await rt.start({ owner: owner(), tool: 'hold', args: {}, execute: hold });
    // Declared without elicitation, with a forged member that would mark them unknown: dropped.
    const checked = await rt.start({
      owner: owner(),
      tool: 'ask',
      args: {},
      execute: ask as never,
      clientCapabilities: { roots: {}, 'io.github.mcp-tasks/carried': { carried: { forged: true }, declared: false } },
      carried: { prepared: 'value' },
    });
    const unknown = await rt.start({ owner: owner(), tool: 'ask', args: {}, execute: ask as never, carried: { prepare: 'in-task' } });
    release.open();
    const refused = await settled(store, checked);
    assert.equal(refused.status, 'failed');
    assert.equal(refused.error?.code, -32021);
    const asked = await eventually(store, unknown, (task) => task.status === 'input_required');
    assert.deepEqual(Object.keys(asked.inputs), ['go']);
    assert.deepEqual(carriedSeen.map((value) => JSON.stringify(value)).sort(), ['{"prepare":"in-task"}', '{"prepared":"value"}']);
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

  test('a resumable task waiting for input gives its run slot back: another task runs meanwhile, and the answer resumes it with its steps replayed, using no attempt', async (t) => {
    const store = new MemoryTaskStore();
    // One slot, a slow poll: the answer itself must bring the task back, not the poll.
    const rt = new TaskRuntime({ store, nodeId: 'a', maxConcurrentRuns: 1, pollIntervalMs: 60_000, maxAttempts: 1 });
    t.after(() => rt.close().then(() => store.close()));
    const calls: string[] = [];
    const ask = async (_args: unknown, ctx: TaskContext) => {
      const before = await ctx.step('before', () => {
        calls.push(`before@${ctx.attempt}`);
        return 'prepared';
      });
      const answer = await ctx.elicit('name', { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
      calls.push(`answered@${ctx.attempt}`);
      return text(`${before}, hello ${String(answer.content?.['name'])} (run ${ctx.attempt})`);
    };
    const quick = async (args: { n: number }) => text(`quick ${args.n}`);
    rt.registerTool('ask', { execute: ask as never, resumable: true });
    rt.registerTool('quick', { execute: quick as never, resumable: false });
    const asking = await rt.start({ owner: owner(), tool: 'ask', args: {}, execute: ask, resumable: true });
    const waiting = await eventually(store, asking, (task) => task.status === 'input_required' && task.nodeId === null);
    assert.equal(waiting.attempt, 1);
    // The parked run unwinds just after the row changed: the slot is free once it has.
    for (const started = Date.now(); rt.running > 0; ) {
      assert.ok(Date.now() - started < 5_000, 'the waiting task gives its run slot back');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The only slot is free: a task started now runs at once instead of queueing.
    const other = await rt.start({ owner: owner(), tool: 'quick', args: { n: 1 }, execute: quick });
    assert.equal((await store.get(other))?.nodeId, 'a', 'the second task was not queued');
    assert.deepEqual((await settled(store, other)).result, text('quick 1'));
    await rt.update(asking, { name: { action: 'accept', content: { name: 'Ada' } } });
    const done = await settled(store, asking);
    assert.deepEqual(done.result, text('prepared, hello Ada (run 2)'));
    assert.deepEqual(calls, ['before@1', 'answered@2'], 'the step ran once; the answer reached the second run only');
    // maxAttempts 1: had the wait counted as a lost run, nothing could have resumed it.
    assert.deepEqual([done.nodeId, done.attempt, done.handovers], ['a', 2, 1]);
  });

  test('a task claimed again on the node whose parked run is still unwinding counts as that node\'s run', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 60_000 });
    t.after(() => rt.close().then(() => store.close()));
    const unwind = gate();
    const secondRun = gate();
    const execute = async (_args: unknown, ctx: TaskContext) => {
      try {
        await ctx.elicit('go', { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
      } catch (error) {
        // The parked run takes its time to stop.
        await unwind.wait;
        throw error;
      }
      secondRun.open();
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      return text('stopped');
    };
    rt.registerTool('slow-unwind', { execute: execute as never, resumable: true });
    const record = await rt.start({ owner: owner(), tool: 'slow-unwind', args: {}, execute, resumable: true });
    await eventually(store, record, (task) => task.status === 'input_required' && task.nodeId === null);
    await rt.update(record, { go: { action: 'accept', content: {} } });
    await secondRun.wait;
    unwind.open();
    // Let the first run's end settle; it must not take the second run's place with it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(rt.running, 1);
    await rt.cancel(record);
    assert.equal((await settled(store, record)).status, 'cancelled');
  });

  test('a task that is not resumable keeps its run slot while it waits for input', async (t) => {
    const store = new MemoryTaskStore();
    const rt = new TaskRuntime({ store, nodeId: 'a', maxConcurrentRuns: 1, pollIntervalMs: 60_000 });
    t.after(() => rt.close().then(() => store.close()));
    const ask = async (_args: unknown, ctx: TaskContext) => {
      const answer = await ctx.elicit('ok', { mode: 'form', message: 'OK?', requestedSchema: { type: 'object', properties: {} } });
      return text(`${answer.action} on run ${ctx.attempt}`);
    };
    rt.registerTool('ask', { execute: ask as never, resumable: false });
    const asking = await rt.start({ owner: owner(), tool: 'ask', args: {}, execute: ask });
    const waiting = await eventually(store, asking, (task) => task.status === 'input_required');
    assert.equal(waiting.nodeId, 'a');
    assert.equal(rt.running, 1);
    await rt.update(asking, { ok: { action: 'accept', content: {} } });
    assert.deepEqual((await settled(store, asking)).result, text('accept on run 1'));
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
