import type { InputAsk } from '../store/task-store.js';
import { isTerminal } from '../task/task-status.js';
import { inputOf, type TaskState } from './task-state.js';

/** Where input `key` stands, for a waiter re-reading after a wake: the same rules as asking, without writing. */
export function decideRead(state: Pick<TaskState, 'status' | 'inputs'>, key: string): InputAsk {
  const input = inputOf(state, key);
  if (input?.response !== undefined) return { state: 'answered', response: input.response };
  if (isTerminal(state.status)) return { state: 'ended', status: state.status };
  return { state: 'pending' };
}
