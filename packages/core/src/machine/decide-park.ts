import { decideRunWrite } from './decide-end.js';
import { inputOf, type RunClaim, type TaskState } from './task-state.js';

/**
 * Whether a run waiting on input `key` may give its task back (a resumable task: waiting is not
 * running, so its run slot goes to work). Only the run that holds the live task may, and only
 * while the key is still outstanding: an answer that came first keeps the run going. A parked
 * task stays `input_required` with no run; it becomes claimable once no key is outstanding.
 */
export function decidePark(state: TaskState, claim: RunClaim, key: string): { readonly kind: 'park' } | { readonly kind: 'keep' } {
  if (decideRunWrite(state, claim).kind === 'lost' || state.status !== 'input_required') return { kind: 'keep' };
  const input = inputOf(state, key);
  return input !== undefined && input.response === undefined ? { kind: 'park' } : { kind: 'keep' };
}

/**
 * Whether a node may claim the task: no run holds it and it has work to do. A task waiting for
 * input with no run (parked, or released while waiting) is not: nothing can run until it is answered.
 */
export function isClaimable(state: Pick<TaskState, 'status' | 'claim'>): boolean {
  return state.claim === null && state.status === 'working';
}
