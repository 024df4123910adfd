import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { extendTaskContext, TaskCancelledError, TaskFanOut, type TaskContext, type TaskOwner, type TaskSignal } from '@mcp-tasks/core';
import { ended, testRuntime, until } from './support/runtime-harness.js';

// What a run's context costs while the run waits, and that its cheaper form keeps the behaviour of
// plain properties: methods read off it (destructured, copied by a spread) still work.

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'test', clientId: '', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const form = { message: 'ok?', requestedSchema: { type: 'object' as const, properties: {} } };

/** Counts the AbortControllers made while the test file runs (the runtime makes its own with the global constructor). */
let controllersMade = 0;
const RealAbortController = globalThis.AbortController;
before(() => {
  globalThis.AbortController = class CountedAbortController extends RealAbortController {
    constructor() {
      super();
      controllersMade += 1;
    }
  };
});
after(() => {
  globalThis.AbortController = RealAbortController;
});

/** A tool that hands its context out and waits for one elicitation. */
function waitingTool(seen: (ctx: TaskContext) => void) {
  return async (_args: object, ctx: TaskContext) => {
    seen(ctx);
    const answer = await ctx.elicit('go', form);
    return text(answer.action);
  };
}

describe('a waiting run', { timeout: 30_000 }, () => {
  test('makes no AbortController until its tool reads the signal', async () => {
    const rt = testRuntime();
    const madeBefore = controllersMade;
    const records = [];
    for (let i = 0; i < 5; i += 1) records.push(await rt.start({ owner: owner(), tool: 'wait', args: {}, execute: waitingTool(() => {}) }));
    for (const record of records) await until(rt, record, (task) => task.status === 'input_required');
    assert.equal(controllersMade - madeBefore, 0);
    for (const record of records) await rt.cancel(record);
    for (const record of records) await until(rt, record, ended);
  });

  test('whose signal is read after its cancel sees it aborted with the cancel', async () => {
    const rt = testRuntime();
    let ctx: TaskContext | undefined;
    const record = await rt.start({ owner: owner(), tool: 'wait', args: {}, execute: waitingTool((c) => (ctx = c)) });
    await until(rt, record, (task) => task.status === 'input_required');
    await rt.cancel(record);
    assert.equal(ctx!.cancelled(), true);
    assert.equal(ctx!.signal.aborted, true);
    assert.ok(ctx!.signal.reason instanceof TaskCancelledError);
    assert.equal(ctx!.signal, ctx!.signal);
  });

  test('whose signal was read before its cancel has it fire', async () => {
    const rt = testRuntime();
    let fired = false;
    const record = await rt.start({
      owner: owner(),
      tool: 'wait',
      args: {},
      execute: waitingTool((ctx) => ctx.signal.addEventListener('abort', () => (fired = true))),
    });
    await until(rt, record, (task) => task.status === 'input_required');
    await rt.cancel(record);
    await until(rt, record, ended);
    assert.equal(fired, true);
  });
});

describe('the task context', { timeout: 30_000 }, () => {
  test('works with its methods destructured and on a spread copy', async () => {
    const rt = testRuntime();
    const record = await rt.start({
      owner: owner(),
      tool: 'detached',
      args: {},
      execute: async (_args, ctx) => {
        const { progress, elicit, cancelled, taskId } = ctx;
        await progress(1, 2);
        const copy = { ...ctx, extra: true };
        assert.equal(copy.taskId, taskId);
        assert.equal(copy.signal.aborted, false);
        assert.equal(cancelled(), false);
        const answer = await elicit('go', form);
        await copy.progress(2, 2);
        return text(`${answer.action} ${Object.keys(ctx).sort().join(',')}`);
      },
    });
    const waiting = await until(rt, record, (task) => task.status === 'input_required');
    assert.equal(waiting.statusMessage, '1/2');
    await rt.update(record, { go: { action: 'accept', content: {} } });
    const task = await until(rt, record, ended);
    assert.deepEqual(task.status === 'completed' && task.result['content'], [
      { type: 'text', text: 'accept attempt,cancelled,elicit,journal,owner,progress,roots,sample,signal,step,taskId' },
    ]);
  });

  test('extended with fields (as a layer above the runtime does) makes no signal and answers for the same run', async () => {
    const rt = testRuntime();
    let madeWhileExtending = -1;
    let extended: (TaskContext & { mode: string }) | undefined;
    const record = await rt.start({
      owner: owner(),
      tool: 'extended',
      args: {},
      execute: async (_args, ctx) => {
        const madeBefore = controllersMade;
        extended = extendTaskContext(ctx, { mode: 'task' });
        madeWhileExtending = controllersMade - madeBefore;
        assert.equal(extended.mode, 'task');
        assert.equal(extended.taskId, ctx.taskId);
        const answer = await extended.elicit('go', form);
        return text(answer.action);
      },
    });
    await until(rt, record, (task) => task.status === 'input_required');
    assert.equal(madeWhileExtending, 0);
    await rt.cancel(record);
    assert.equal(extended!.cancelled(), true);
    assert.equal(extended!.signal.aborted, true);
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'cancelled');
  });
});

describe('the fan-out of one task', { timeout: 10_000 }, () => {
  test('tells every watcher, and the ones left after an unwatch', () => {
    const fanOut = new TaskFanOut((error) => {
      throw error;
    });
    const heard: string[] = [];
    const input: TaskSignal = { kind: 'input' };
    const unwatchA = fanOut.watch('t', () => heard.push('a'));
    fanOut.signal('t', input);
    const unwatchB = fanOut.watch('t', () => heard.push('b'));
    fanOut.signal('t', input);
    unwatchA();
    unwatchA();
    fanOut.signal('t', input);
    assert.deepEqual(fanOut.watchedTaskIds(), ['t']);
    unwatchB();
    fanOut.signal('t', input);
    assert.deepEqual(heard, ['a', 'a', 'b', 'b']);
    assert.deepEqual(fanOut.watchedTaskIds(), []);
  });

  test('a watcher that unwatches while told does not keep the others from hearing', () => {
    const fanOut = new TaskFanOut(() => {});
    const heard: string[] = [];
    const unwatchA: () => void = fanOut.watch('t', () => (heard.push('a'), unwatchA()));
    fanOut.watch('t', () => heard.push('b'));
    fanOut.signal('t', { kind: 'input' });
    fanOut.signal('t', { kind: 'input' });
    assert.deepEqual(heard, ['a', 'b', 'b']);
  });
});
