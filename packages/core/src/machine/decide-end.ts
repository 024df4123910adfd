import { isTerminal } from '../task/task-status.js';
import { claimHolds, type RunClaim, type TaskState } from './task-state.js';

/** What a cancel does: a live task becomes `cancelled`, a terminal one stays as it is. */
export function decideCancel(state: Pick<TaskState, 'status'>): { readonly kind: 'cancel' } | { readonly kind: 'unchanged' } {
  return isTerminal(state.status) ? { kind: 'unchanged' } : { kind: 'cancel' };
}

/**
 * What a run's write (progress, finish) does: a live task that the run still holds takes it;
 * otherwise the write lost (a cancel won, the run no longer holds the task) and nothing changes.
 * Terminal is final: no write leaves it.
 */
export function decideRunWrite(state: TaskState, claim: RunClaim | undefined): { readonly kind: 'write' } | { readonly kind: 'lost' } {
  return !isTerminal(state.status) && claimHolds(state, claim) ? { kind: 'write' } : { kind: 'lost' };
}
