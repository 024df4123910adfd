import type { InputResponses } from '../input/input-request.js';
import { validateInputResponse } from '../store/validate-store-input.js';
import type { TaskInput } from '../task/task-record.js';
import { isTerminal, type TaskStatus } from '../task/task-status.js';
import { outstandingKeys, type TaskState } from './task-state.js';

/** What a `tasks/update` does to a task. */
export interface AnswerDecision {
  /** The keys whose answers count: outstanding ones only, in the order given. */
  readonly accepted: readonly string[];
  /** The inputs to write: each accepted key with its request and first answer. */
  readonly answered: Readonly<Record<string, TaskInput>>;
  /** The status after the write: `working` once no key is outstanding. */
  readonly status: TaskStatus;
}

/**
 * Only the first answer of an outstanding key counts; unknown and answered keys are ignored, and
 * a terminal task takes none. Every accepted answer is checked against its request before any is
 * written, so one bad answer loses nothing (throws `InvalidTaskValueError`).
 */
export function decideAnswer(state: TaskState, responses: InputResponses): AnswerDecision {
  if (isTerminal(state.status)) return { accepted: [], answered: {}, status: state.status };
  const outstanding = outstandingKeys(state);
  // Own keys only: an inherited name such as `constructor` is no key of any task.
  const accepted = Object.keys(responses).filter((key) => outstanding.includes(key));
  const answered: Record<string, TaskInput> = {};
  for (const key of accepted) {
    const request = state.inputs[key]!.request;
    validateInputResponse(key, request, responses[key]!);
    answered[key] = { request, response: responses[key]! };
  }
  const remaining = outstanding.filter((key) => !(key in answered));
  const status = accepted.length > 0 && remaining.length === 0 ? 'working' : state.status;
  return { accepted, answered, status };
}
