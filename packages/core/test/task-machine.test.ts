// The state machine's pure decisions, against the same table every store runs through its real
// operations (runTaskMachineCases): the table is the one statement of the lifecycle rules.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decideAnswer,
  decideAsk,
  decideCancel,
  decideLostRun,
  decideQuota,
  isTerminal,
  decidePark,
  isClaimable,
  decideRead,
  decideRunWrite,
  InvalidTaskValueError,
  outstandingKeys,
  type TaskInput,
  type TaskState,
  type TaskStatus,
} from '@mcp-tasks/core';
import { TASK_MACHINE_CASES, type MachineAct, type MachineGiven } from '@mcp-tasks/core/testing';
import { CASE_REQUEST, caseInputs, caseResponses, caseStatus, RUNNER } from '../src/testing/task-machine-cases.js';

interface After {
  readonly answer: string;
  readonly state: TaskState;
}

function apply(state: TaskState, action: MachineAct, held: number, given: MachineGiven): After {
  const claim = { nodeId: ('claim' in action && action.claim) || RUNNER, attempt: ('attempt' in action && action.attempt) || held };
  switch (action.op) {
    case 'ask': {
      const decision = decideAsk(state, action.key);
      if (decision.kind !== 'ask') return { answer: decision.kind, state };
      if (decideRunWrite(state, claim).kind === 'lost') return { answer: 'ended', state };
      const inputs: Record<string, TaskInput> = decision.newKey ? { ...state.inputs, [action.key]: { request: CASE_REQUEST } } : { ...state.inputs };
      return { answer: 'pending', state: { ...state, status: 'input_required', inputs } };
    }
    case 'read':
      return { answer: decideRead(state, action.key).state, state };
    case 'answer': {
      try {
        const decision = decideAnswer(state, caseResponses(action.responses));
        return { answer: `accepted:${decision.accepted.join(',')}`, state: { ...state, status: decision.status, inputs: { ...state.inputs, ...decision.answered } } };
      } catch (error) {
        if (error instanceof InvalidTaskValueError) return { answer: 'refused', state };
        throw error;
      }
    }
    case 'cancel':
      return decideCancel(state).kind === 'cancel' ? { answer: 'cancelled', state: { ...state, status: 'cancelled' } } : { answer: 'unchanged', state };
    case 'finish':
    case 'progress': {
      if (decideRunWrite(state, claim).kind === 'lost') return { answer: 'lost', state };
      const status: TaskStatus = action.op === 'finish' ? 'completed' : state.status;
      return { answer: 'written', state: { ...state, status } };
    }
    case 'step':
      return { answer: decideRunWrite(state, claim).kind === 'lost' ? 'lost' : 'run', state };
    case 'park':
      return decidePark(state, claim, action.key).kind === 'park' ? { answer: 'parked', state: { ...state, claim: null } } : { answer: 'kept', state };
    case 'claim':
      return isClaimable(state) ? { answer: 'claimed', state: { ...state, claim: { nodeId: RUNNER, attempt: held + 1 } } } : { answer: 'none', state };
    case 'lose': {
      // A reclaimed task was handed over once before its second claim.
      const lost = { ...state, resumable: given.resumable ?? false, attempt: held, handovers: given.reclaimed ? 1 : 0, maxAttempts: given.maxAttempts ?? 3 };
      const decision = decideLostRun(lost);
      if (decision.kind === 'release') return { answer: 'released', state: { ...state, claim: null } };
      if (decision.kind === 'fail') return { answer: 'failed', state: { ...state, status: 'failed' } };
      return { answer: 'unchanged', state };
    }
    case 'create':
      return { answer: decideQuota(isTerminal(state.status) ? 0 : 1, action.maxLive).kind === 'create' ? 'created' : 'refused', state };
  }
}

describe('the task state machine decides each case of the lifecycle table', () => {
  for (const machineCase of TASK_MACHINE_CASES) {
    test(machineCase.name, () => {
      // A reclaimed task is held by the runner's second attempt.
      const held = machineCase.given.reclaimed ? 2 : 1;
      const before: TaskState = {
        status: caseStatus(machineCase.given),
        inputs: caseInputs(machineCase.given),
        claim: machineCase.given.parked ? null : { nodeId: RUNNER, attempt: held },
      };
      const after = apply(before, machineCase.act, held, machineCase.given);
      const holder = after.state.claim === null ? 'none' : after.state.claim.attempt === held ? 'runner' : 'next';
      assert.deepEqual(
        { answer: after.answer, status: after.state.status, outstanding: outstandingKeys(after.state), holder },
        { holder: 'runner', ...machineCase.expect, outstanding: [...machineCase.expect.outstanding] },
      );
    });
  }

  test('a write without a claim is not fenced', () => {
    assert.equal(decideRunWrite({ status: 'working', inputs: {}, claim: { nodeId: 'x', attempt: 1 } }, undefined).kind, 'write');
  });
});
