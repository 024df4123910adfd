import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { InputResponse } from '../input/input-request.js';
import { TASK_LIMITS } from '../store/task-limits.js';
import { isTerminal, type TaskStatus } from '../task/task-status.js';
import { inputOf, type TaskState } from './task-state.js';

/** What asking for input under a key does to a task. */
export type AskDecision =
  /** The key was answered before: its first answer, and nothing is written. */
  | { readonly kind: 'answered'; readonly response: InputResponse }
  /** The task is terminal: nothing is asked. */
  | { readonly kind: 'ended'; readonly status: TaskStatus }
  /**
   * The task goes (or stays) `input_required`; `newKey` records the request under the key (an
   * outstanding key keeps its first request); `changed` tells followers something moved.
   */
  | { readonly kind: 'ask'; readonly newKey: boolean; readonly changed: boolean };

/**
 * Keys are unique over a task's life: an answered key replays its first answer, even once the
 * task has ended (the answer was given while it was live). A task asks at most
 * `TASK_LIMITS.maxInputKeys` keys; one more is refused with a typed error.
 */
export function decideAsk(state: TaskState, key: string): AskDecision {
  const existing = inputOf(state, key);
  if (existing?.response !== undefined) return { kind: 'answered', response: existing.response };
  if (isTerminal(state.status)) return { kind: 'ended', status: state.status };
  if (!existing && Object.keys(state.inputs).length >= TASK_LIMITS.maxInputKeys) {
    throw new InvalidTaskValueError(`a task may ask at most ${TASK_LIMITS.maxInputKeys} input keys`);
  }
  return { kind: 'ask', newKey: !existing, changed: !existing || state.status !== 'input_required' };
}
