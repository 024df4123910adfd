import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  JsonRpcError,
  MemoryTaskStore,
  QuotaExceededError,
  RuntimeDrainingError,
  TaskCancelledError,
  TaskNotFoundError,
  TaskRuntime,
  expiryOfTaskId,
  type TaskContext,
  type TaskOwner,
  type TaskStore,
} from '@mcp-tasks/core';
import { ended, testRuntime, until } from './support/runtime-harness.js';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'test', clientId: '', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
/** A form elicitation with no fields: the smallest one the protocol accepts. */
const form = (message: string) => ({ message, requestedSchema: { type: 'object' as const, properties: {} } });

const runtime = testRuntime;

/** A gate a test opens to let a tool go on. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A tool that ignores everything but its signal, and opens `aborted` when it fires. */
function untilAborted(aborted: { open: () => void }) {
  return async (_args: object, ctx: TaskContext) => {
    ctx.signal.addEventListener('abort', () => aborted.open());
    await new Promise(() => {});
    return text('never');
  };
}


describe('a task run', () => {
  test('is committed before start resolves and runs in the background', async () => {
    const rt = runtime();
    const g = gate();
    const record = await rt.start({ owner: owner(), tool: 'slow', args: {}, execute: async () => (await g.wait, text('ok')) });
    const ref = { taskId: record.taskId, owner: record.owner };
    assert.equal((await rt.get(ref)).status, 'working');
    assert.equal(rt.running, 1);
    g.open();
    const task = await until(rt, ref, ended);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.status === 'completed' && task.result, { resultType: 'complete', ...text('ok') });
    assert.equal(record.taskId.length, 28);
    const hour = expiryOfTaskId(record.taskId);
    assert.ok(hour && record.ttlMs !== null, 'the id of a task with a TTL names the hour it expires in');
    // The id is minted a moment before the store stamps createdAt, which may be in the next hour.
    const expiresAt = record.createdAt.getTime() + record.ttlMs;
    assert.ok(hour.hourStartsAt <= expiresAt && expiresAt < hour.hourStartsAt + 2 * 3_600_000, `hour ${hour.hourStartsAt} for expiry ${expiresAt}`);
  });

  test('a tool result with isError is a completed task', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => ({ ...text('bad input'), isError: true }) });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'completed');
  });

  test('a thrown JSON-RPC error fails the task with that error and a status message', async () => {
    const rt = runtime();
    const record = await rt.start({
      owner: owner(),
      tool: 't',
      args: {},
      execute: async () => {
        throw new JsonRpcError(-32000, 'API rate limit exceeded', { retryAfter: 3 });
      },
    });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.status === 'failed' && task.error, { code: -32000, message: 'API rate limit exceeded', data: { retryAfter: 3 } });
    assert.equal(task.statusMessage, 'Tool execution failed: API rate limit exceeded');
  });

  test('an error recognised by the classifier hook fails the task with its JSON-RPC shape', async () => {
    class SdkError extends Error {
      code = -32042;
    }
    const rt = runtime({ classifyError: (e) => (e instanceof SdkError ? { code: e.code, message: e.message } : undefined) });
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => Promise.reject(new SdkError('nope')) });
    const task = await until(rt, record, ended);
    assert.deepEqual(task.status === 'failed' && task.error, { code: -32042, message: 'nope' });
  });

  test('a plain throw completes the task with the isError result the inline path gives', async () => {
    const seen: unknown[] = [];
    const rt = runtime({ onError: (error) => seen.push(error) });
    const record = await rt.start({
      owner: owner(),
      tool: 't',
      args: {},
      execute: async () => {
        throw new Error('The upstream rejected the batch');
      },
    });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.status === 'completed' && task.result, {
      resultType: 'complete',
      content: [{ type: 'text', text: 'The upstream rejected the batch' }],
      isError: true,
    });
    assert.equal(seen.length, 0, 'the message reached the client; nothing to log');
  });

  test('a thrown non-Error completes the task with its string form, as the inline path does', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => Promise.reject('quota gone') });
    const task = await until(rt, record, ended);
    assert.deepEqual(task.status === 'completed' && task.result['content'], [{ type: 'text', text: 'quota gone' }]);
  });

  test('an internal error inside the task context fails the task with a generic message whose reference is in the log', async () => {
    const logged: Array<{ error: unknown; ref: string | undefined }> = [];
    const store = new MemoryTaskStore();
    // A store outage is no news (the run waits and reads again); what is left to reach a tool's
    // call is a fault of the runtime itself: here, an answer whose reading throws.
    const fault = async () => ({
      state: 'answered',
      get response(): never {
        throw new Error('connect ECONNREFUSED 10.1.2.3:5432 password=hunter2');
      },
    });
    const faulty = new Proxy(store, {
      get: (target, name) => {
        if (name === 'requestInput') return fault;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as TaskStore;
    const rt = runtime({ store: faulty, onError: (error, task) => logged.push({ error, ref: task.ref }) });
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async (_a, ctx) => text((await ctx.elicit('e', form('?'))).action) });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'failed');
    const error = task.status === 'failed' ? task.error : undefined;
    assert.equal(error?.code, -32603);
    const ref = /^Internal error \(ref ([0-9a-f]{12})\)$/.exec(error?.message ?? '')?.[1];
    assert.ok(ref, `generic message with a reference, got ${error?.message}`);
    assert.doesNotMatch(JSON.stringify(task), /hunter2|ECONNREFUSED/);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.ref, ref);
    assert.match(String(logged[0]!.error), /ECONNREFUSED/);
  });

  test('a result that cannot be stored fails the task and says why', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => ({ content: [], at: new Date() }) as never });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'failed');
    assert.match(task.status === 'failed' ? task.error.message : '', /invalid result/);
  });
});

describe('progress and cancellation', () => {
  test('progress sets the status message; after a cancel it changes nothing', async () => {
    const rt = runtime();
    const step = gate();
    const after = gate();
    let ctxRef: TaskContext | undefined;
    const record = await rt.start({
      owner: owner(),
      tool: 'export',
      args: {},
      execute: async (_args, ctx) => {
        ctxRef = ctx;
        await ctx.progress(1, 10);
        step.open();
        await after.wait;
        await ctx.progress(2, 10, 'late');
        return text('done');
      },
    });
    await step.wait;
    assert.equal((await rt.get(record)).statusMessage, '1/10');
    await rt.cancel(record);
    assert.equal(ctxRef?.cancelled(), true);
    assert.equal(ctxRef?.signal.aborted, true);
    after.open();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const task = await rt.get(record);
    assert.equal(task.status, 'cancelled');
    assert.equal(task.statusMessage, '1/10');
  });

  test('cancelling a finished task leaves it as it was', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => text('ok') });
    await until(rt, record, ended);
    await rt.cancel(record);
    assert.equal((await rt.get(record)).status, 'completed');
  });

  test('a cancel written through another runtime on the same store reaches the run', async () => {
    const store = new MemoryTaskStore();
    const a = runtime({ store, pollIntervalMs: 60_000 });
    const b = new TaskRuntime({ store, pollIntervalMs: 60_000 });
    const aborted = gate();
    const record = await a.start({
      owner: owner(),
      tool: 't',
      args: {},
      execute: untilAborted(aborted),
    });
    await b.cancel(record);
    await aborted.wait;
  });

  test('the poll notices a task that ended without a signal', async () => {
    const store = new MemoryTaskStore();
    // A store that delivers no events: only the backstop poll can tell the run.
    const deaf: TaskStore = {
      create: (task, options) => store.create(task, options),
      list: (owner, options) => store.list(owner, options),
      get: (ref) => store.get(ref),
      read: (ref) => store.read(ref),
      setStatusMessage: (ref, message, claim) => store.setStatusMessage(ref, message, claim),
      requestInput: (ref, key, request, claim) => store.requestInput(ref, key, request, claim),
      readInput: (ref, key) => store.readInput(ref, key),
      answerInput: (ref, responses) => store.answerInput(ref, responses),
      cancel: (ref) => store.cancel(ref),
      finish: (ref, outcome, claim) => store.finish(ref, outcome, claim),
      controlStates: (refs) => store.controlStates(refs),
      markFollowed: (ref) => store.markFollowed(ref),
      markFollowedMany: (owner, taskIds) => store.markFollowedMany(owner, taskIds),
      claim: (nodeId, tools) => store.claim(nodeId, tools),
      release: (ref, claim) => store.release(ref, claim),
      park: (ref, claim, key) => store.park(ref, claim, key),
      beginStep: (ref, claim, name) => store.beginStep(ref, claim, name),
      finishStep: (ref, claim, name, result) => store.finishStep(ref, claim, name, result),
      steps: (ref) => store.steps(ref),
      close: () => store.close(),
    };
    const rt = runtime({ store: deaf, pollIntervalMs: 30 });
    const aborted = gate();
    const record = await rt.start({
      owner: owner(),
      tool: 't',
      args: {},
      execute: untilAborted(aborted),
    });
    await store.cancel(record);
    await aborted.wait;
  });

  test('an expired task is aborted and reads as absent', async () => {
    const rt = runtime({ ttlMs: 100, pollIntervalMs: 20 });
    const aborted = gate();
    const record = await rt.start({
      owner: owner(),
      tool: 't',
      args: {},
      execute: untilAborted(aborted),
    });
    await aborted.wait;
    await assert.rejects(rt.get(record), TaskNotFoundError);
  });
});

describe('input', () => {
  test('elicit waits in input_required until tasks/update answers, then continues', async () => {
    const rt = runtime({ pollIntervalMs: 60_000 });
    const record = await rt.start({
      owner: owner(),
      tool: 'greet',
      args: {},
      execute: async (_args, ctx) => {
        const answer = await ctx.elicit('name', { message: 'Your name?', mode: 'form', requestedSchema: { type: 'object', properties: {} } });
        const again = await ctx.elicit('name', form('Asked again'));
        assert.deepEqual(again, answer);
        return text(`Hello, ${String(answer.content?.['name'])}!`);
      },
    });
    const waiting = await until(rt, record, (t) => t.status === 'input_required');
    assert.deepEqual(Object.keys(waiting.status === 'input_required' ? waiting.inputRequests : {}), ['name']);
    await rt.update(record, { name: { action: 'accept', content: { name: 'Luca' } } });
    const task = await until(rt, record, ended);
    assert.deepEqual(task.status === 'completed' && task.result['content'], [{ type: 'text', text: 'Hello, Luca!' }]);
  });

  test('with several keys outstanding a partial answer leaves only the rest', async () => {
    const rt = runtime({ pollIntervalMs: 60_000 });
    const record = await rt.start({
      owner: owner(),
      tool: 'multi',
      args: {},
      execute: async (_args, ctx) => {
        const [a, b] = await Promise.all([ctx.elicit('a', form('A?')), ctx.roots('b')]);
        return text(`${a.action} ${b.roots.length}`);
      },
    });
    await until(rt, record, (t) => t.status === 'input_required' && Object.keys(t.inputRequests).length === 2);
    await rt.update(record, { a: { action: 'decline' }, unknown: { action: 'accept' } });
    const partial = await rt.get(record);
    assert.equal(partial.status, 'input_required');
    assert.deepEqual(Object.keys(partial.status === 'input_required' ? partial.inputRequests : {}), ['b']);
    await rt.update(record, { b: { roots: [{ uri: 'file:///a' }] } });
    const task = await until(rt, record, ended);
    assert.deepEqual(task.status === 'completed' && task.result['content'], [{ type: 'text', text: 'decline 1' }]);
  });

  test('a cancel while waiting ends the wait: a cancelled elicitation, an error for sampling and roots', async () => {
    const rt = runtime({ pollIntervalMs: 60_000 });
    const outcomes: string[] = [];
    const record = await rt.start({
      owner: owner(),
      tool: 'ask',
      args: {},
      execute: async (_args, ctx) => {
        const results = await Promise.allSettled([
          ctx.elicit('e', form('E?')),
          ctx.sample('s', { messages: [], maxTokens: 10 }),
          ctx.roots('r'),
        ]);
        for (const r of results) outcomes.push(r.status === 'fulfilled' ? `action:${r.value['action']}` : (r.reason as Error).constructor.name);
        return text('stopped');
      },
    });
    await until(rt, record, (t) => t.status === 'input_required' && Object.keys(t.inputRequests).length === 3);
    await rt.cancel(record);
    const deadline = Date.now() + 2_000;
    while (outcomes.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(outcomes, ['action:cancel', TaskCancelledError.name, TaskCancelledError.name]);
    assert.equal((await rt.get(record)).status, 'cancelled');
  });

  test('an answer that does not fit the request is refused and the task keeps waiting', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 'ask', args: {}, execute: async (_a, ctx) => text((await ctx.elicit('e', form('?'))).action) });
    await until(rt, record, (t) => t.status === 'input_required');
    await assert.rejects(rt.update(record, { e: { action: 'maybe' } }), /action must be/);
    assert.equal((await rt.get(record)).status, 'input_required');
  });
});

describe('ownership, quota and drain', () => {
  test('another owner is told the task does not exist, exactly as for an unknown id', async () => {
    const rt = runtime();
    const record = await rt.start({ owner: owner(), tool: 't', args: {}, execute: async () => text('ok') });
    const stranger = { taskId: record.taskId, owner: { ...record.owner, clientId: 'other' } };
    const unknown = { taskId: 'A'.repeat(24), owner: record.owner };
    for (const ref of [stranger, unknown]) {
      await assert.rejects(rt.get(ref), (e: unknown) => e instanceof TaskNotFoundError && e.code === -32602 && e.message === 'Failed to retrieve task: Task not found');
      await assert.rejects(rt.cancel(ref), TaskNotFoundError);
      await assert.rejects(rt.update(ref, {}), TaskNotFoundError);
    }
  });

  test('an owner at maxPerPrincipal gets no new task', async () => {
    const rt = runtime({ maxPerPrincipal: 2 });
    const me = owner();
    const forever = async () => (await new Promise(() => {}), text('never'));
    await rt.start({ owner: me, tool: 't', args: {}, execute: forever });
    await rt.start({ owner: me, tool: 't', args: {}, execute: forever });
    await assert.rejects(rt.start({ owner: me, tool: 't', args: {}, execute: forever }), (e: unknown) => e instanceof QuotaExceededError && e.code === -32600 && /maxPerPrincipal/.test(e.message));
    await rt.start({ owner: owner(), tool: 't', args: {}, execute: forever });
  });

  test('drain lets quick runs finish, fails the rest after the deadline, and takes no new task', async () => {
    const rt = runtime();
    const me = owner();
    const quick = await rt.start({ owner: me, tool: 'q', args: {}, execute: async () => (await new Promise((r) => setTimeout(r, 20)), text('quick')) });
    const slow = await rt.start({ owner: me, tool: 's', args: {}, execute: async (_a, ctx) => (await new Promise((r) => ctx.signal.addEventListener('abort', r)), text('late')) });
    await rt.drain(200);
    assert.equal((await rt.get(quick)).status, 'completed');
    const failed = await rt.get(slow);
    assert.equal(failed.status, 'failed');
    assert.match(failed.status === 'failed' ? failed.error.message : '', /shut down/);
    await assert.rejects(rt.start({ owner: me, tool: 'q', args: {}, execute: async () => text('x') }), RuntimeDrainingError);
    assert.equal(rt.running, 0);
  });
});
