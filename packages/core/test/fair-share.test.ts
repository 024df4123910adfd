// The fair share of a contended node (issue 37, point 10), on the memory store: which runs are
// held back, and when they go on. test/runtime/fair-share.test.ts measures it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { TaskContext, TaskOwner } from '@mcp-tasks/core';
import { testRuntime } from './support/runtime-harness.js';

const owner = (name: string): TaskOwner => ({ subject: `${name}-${randomUUID()}`, server: 'fair-share', clientId: 'client', resource: '' });
const done = { content: [{ type: 'text', text: 'done' }] };

async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Steps until `stop()` holds; counts its steps in `steps`. */
const stepper = (steps: Map<string, number>, stop: () => boolean) => async (_args: unknown, ctx: TaskContext) => {
  for (let n = 1; !stop(); n += 1) {
    await ctx.step(`s-${n}`, () => n);
    steps.set(ctx.taskId, n);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done;
};

describe('the fair share of a contended node', { timeout: 30_000 }, () => {
  test("an owner's runs beyond its share wait while another owner's run is in motion, and go on when it ends", async () => {
    const rt = testRuntime({ fairShareRuns: 4 });
    const steps = new Map<string, number>();
    let stopBusy = false;
    let stopOther = false;
    const busy = owner('busy');
    const busyTasks = await Promise.all(Array.from({ length: 6 }, () => rt.start({ owner: busy, tool: 't', args: {}, execute: stepper(steps, () => stopBusy) })));
    await eventually(() => busyTasks.every((task) => (steps.get(task.taskId) ?? 0) > 0), 'every busy run steps');
    assert.deepEqual(rt.fairShare, { share: Infinity, heldBack: 0 }, 'an owner alone is never held back');
    const other = await rt.start({ owner: owner('other'), tool: 't', args: {}, execute: stepper(steps, () => stopOther) });
    // Two owners in motion: 4 / 2 = 2 runs each; the busy owner's last four wait.
    assert.deepEqual(rt.fairShare, { share: 2, heldBack: 4 });
    const before = busyTasks.map((task) => steps.get(task.taskId) ?? 0);
    await eventually(() => (steps.get(other.taskId) ?? 0) >= 20, 'the other run steps');
    const during = busyTasks.map((task, index) => (steps.get(task.taskId) ?? 0) - before[index]!);
    assert.ok(during.slice(0, 2).every((n) => n >= 10), `the first two busy runs go on: ${during}`);
    assert.ok(during.slice(2).every((n) => n <= 1), `the rest wait at their next step: ${during}`);
    stopOther = true;
    await eventually(() => rt.fairShare.heldBack === 0, 'the contention ends');
    const resumed = busyTasks.map((task) => steps.get(task.taskId) ?? 0);
    await eventually(() => busyTasks.every((task, index) => (steps.get(task.taskId) ?? 0) > resumed[index]! + 5), 'every busy run goes on');
    stopBusy = true;
  });

  test('a run waiting for input is not in motion: it neither contends nor counts against its share', async () => {
    const rt = testRuntime({ fairShareRuns: 2 });
    const steps = new Map<string, number>();
    let stop = false;
    const waiter = await rt.start({
      owner: owner('waiter'),
      tool: 't',
      args: {},
      execute: async (_args, ctx) => {
        await ctx.elicit('k', { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
        return done;
      },
    });
    await eventually(() => rt.running === 1, 'the waiter runs');
    const busy = owner('busy');
    await Promise.all(Array.from({ length: 3 }, () => rt.start({ owner: busy, tool: 't', args: {}, execute: stepper(steps, () => stop) })));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await rt.get({ taskId: waiter.taskId, owner: waiter.owner })).status, 'input_required');
    assert.deepEqual(rt.fairShare, { share: Infinity, heldBack: 0 });
    stop = true;
  });

  test('a cancel reaches a run that waits for its turn, and a drain holds none back', async () => {
    const rt = testRuntime({ fairShareRuns: 2 });
    const steps = new Map<string, number>();
    let stop = false;
    const busy = owner('busy');
    const busyTasks = await Promise.all(Array.from({ length: 3 }, () => rt.start({ owner: busy, tool: 't', args: {}, execute: stepper(steps, () => stop) })));
    await eventually(() => busyTasks.every((task) => steps.has(task.taskId)), 'every busy run steps');
    await rt.start({ owner: owner('other'), tool: 't', args: {}, execute: stepper(steps, () => stop) });
    assert.equal(rt.fairShare.heldBack, 2);
    const last = busyTasks[2]!;
    await rt.cancel({ taskId: last.taskId, owner: last.owner });
    await eventually(() => rt.fairShare.heldBack === 1, 'the cancelled run ended');
    const draining = rt.drain(2_000);
    assert.equal(rt.fairShare.heldBack, 0);
    stop = true;
    await draining;
  });
});
