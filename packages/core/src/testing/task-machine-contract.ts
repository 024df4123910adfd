import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { outstandingKeys, stateOf } from '../machine/task-state.js';
import type { TaskRef, TaskStore } from '../store/task-store.js';
import { newTaskId } from '../task/task-id.js';
import type { RunClaim } from '../machine/task-state.js';
import { CASE_REQUEST, caseResponses, RUNNER, TASK_MACHINE_CASES, type MachineAct, type MachineAnswer, type MachineGiven, type RunWrite } from './task-machine-cases.js';
import type { StoreUnderTest } from './task-store-contract.js';

const RESULT = { content: [{ type: 'text', text: 'done' }] };
const FAILURE = { code: -32603, message: 'It broke' };

/**
 * The lifecycle table ({@link TASK_MACHINE_CASES}) through a store's real operations: each case's
 * task is brought to its state by ordinary calls, the act runs, and the answer, the status and the
 * outstanding keys must be what core's state machine decides.
 */
export function runTaskMachineCases(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`the task state machine, through ${name}`, () => {
    let subject: StoreUnderTest;
    before(async () => {
      subject = await makeStore();
    });
    after(async () => {
      await subject.close();
    });

    for (const machineCase of TASK_MACHINE_CASES) {
      test(machineCase.name, async (t) => {
        const { store } = subject;
        const runner = subject.runner ?? RUNNER;
        if (machineCase.act.op === 'lose' && !subject.loseRuns) return t.skip(`${name} has no lost runs (one process)`);
        const { ref, attempt, tool } = await reach(store, machineCase.given, runner);
        const answer = await act(subject, ref, machineCase.act, attempt, tool, runner);
        const task = await store.get(ref);
        assert.ok(task, 'the task is still there');
        const { answer: expected, status, outstanding } = machineCase.expect;
        assert.deepEqual({ answer, status: task.status, outstanding: outstandingKeys(task) }, { answer: expected, status, outstanding: [...outstanding] });
        const holder = machineCase.expect.holder ?? 'runner';
        assert.deepEqual(stateOf(task).claim, holder === 'none' ? null : { nodeId: runner, attempt: holder === 'next' ? attempt + 1 : attempt });
      });
    }
  });
}

async function reach(store: TaskStore, given: MachineGiven, runner: string): Promise<{ ref: TaskRef; attempt: number; tool: string }> {
  const owner = { subject: `user-${randomUUID()}`, server: 'machine', clientId: 'client', resource: '' };
  const taskId = newTaskId();
  // A tool of its own, so the case's claim can only take its own task.
  const tool = `machine-${randomUUID()}`;
  const created = await store.create(
    { taskId, owner, tool, scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: runner, resumable: given.resumable ?? false, ...(given.maxAttempts === undefined ? {} : { maxAttempts: given.maxAttempts }) },
    { maxLive: Infinity },
  );
  const ref = { taskId, owner };
  let attempt = created.attempt;
  if (given.reclaimed) {
    assert.ok(await store.release(ref, { nodeId: runner, attempt }), 'the first run hands the task over');
    const claimed = await store.claim(runner, [tool]);
    assert.equal(claimed?.taskId, taskId, 'the runner claims the task again');
    attempt = claimed.attempt;
    assert.equal(attempt, created.attempt + 1, 'the claim moved the attempt on');
  }
  for (const key of given.asked ?? []) await store.requestInput(ref, key, CASE_REQUEST);
  if (given.parked) assert.ok(await store.park(ref, { nodeId: runner, attempt }, given.asked![0]!), 'the waiting run gives the task back');
  if (given.answered?.length) {
    await store.answerInput(ref, caseResponses(Object.fromEntries(given.answered.map((key) => [key, 'good' as const]))));
  }
  if (given.ended === 'cancelled') await store.cancel(ref);
  if (given.ended === 'completed') await store.finish(ref, { status: 'completed', result: RESULT });
  if (given.ended === 'failed') await store.finish(ref, { status: 'failed', error: FAILURE, statusMessage: FAILURE.message });
  return { ref, attempt, tool };
}

async function act(subject: StoreUnderTest, ref: TaskRef, action: MachineAct, held: number, tool: string, runner: string): Promise<MachineAnswer> {
  const { store } = subject;
  // A case's other node ('node-b') stays itself; the runner is the store's.
  const claim = (write: RunWrite): RunClaim => ({ nodeId: write.claim ?? runner, attempt: write.attempt ?? held });
  switch (action.op) {
    case 'ask':
      return (await store.requestInput(ref, action.key, CASE_REQUEST, claim(action))).state;
    case 'read':
      return (await store.readInput(ref, action.key)).state;
    case 'answer':
      try {
        const answered = await store.answerInput(ref, caseResponses(action.responses));
        return `accepted:${answered?.accepted.join(',') ?? ''}`;
      } catch (error) {
        if (error instanceof InvalidTaskValueError) return 'refused';
        throw error;
      }
    case 'cancel': {
      const before = await store.get(ref);
      const after = await store.cancel(ref);
      return before?.status !== 'cancelled' && after?.status === 'cancelled' ? 'cancelled' : 'unchanged';
    }
    case 'finish':
      return (await store.finish(ref, { status: 'completed', result: RESULT }, claim(action))) ? 'written' : 'lost';
    case 'progress':
      return (await store.setStatusMessage(ref, '1/2', claim(action))) ? 'written' : 'lost';
    case 'step':
      return (await store.beginStep(ref, claim(action), 'step-1')).state;
    case 'park':
      return (await store.park(ref, claim(action), action.key)) ? 'parked' : 'kept';
    case 'claim':
      return (await store.claim(runner, [tool]))?.taskId === ref.taskId ? 'claimed' : 'none';
    case 'lose': {
      const before = await store.get(ref);
      await subject.loseRuns!();
      const after = await store.get(ref);
      if (before?.status !== 'failed' && after?.status === 'failed') return 'failed';
      return before?.nodeId !== null && after?.nodeId === null ? 'released' : 'unchanged';
    }
    case 'create':
      try {
        await store.create({ taskId: newTaskId(), owner: ref.owner, tool, scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: runner }, { maxLive: action.maxLive });
        return 'created';
      } catch (error) {
        if (error instanceof QuotaExceededError) return 'refused';
        throw error;
      }
  }
}
