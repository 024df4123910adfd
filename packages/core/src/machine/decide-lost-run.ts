import { isTerminal } from '../task/task-status.js';
import type { TaskState } from './task-state.js';

/** What the lost-run rule reads of a task beyond its state. */
export interface LostRunState extends Pick<TaskState, 'status' | 'claim'> {
  readonly resumable: boolean;
  /** Claims so far (each claim increments it). */
  readonly attempt: number;
  /** Runs that ended by a hand-over (a draining node, a park), which are no lost runs. */
  readonly handovers: number;
  readonly maxAttempts: number;
}

/**
 * What becomes of a live task whose run was lost (its node's lease expired, an earlier incarnation
 * of its node left it, its node holds no run for it): a resumable task with attempts left is
 * released for any node to claim, keeping its status (a run resumes it from its journal); any
 * other fails. A task no run holds, or one that ended, is no lost run and stays as it is. The SQL
 * store writes the same rule once (`postgres/src/sql/lost-run.ts`).
 */
export function decideLostRun(state: LostRunState): { readonly kind: 'release' } | { readonly kind: 'fail' } | { readonly kind: 'unchanged' } {
  if (isTerminal(state.status) || state.claim === null) return { kind: 'unchanged' };
  return state.resumable && state.attempt - state.handovers < state.maxAttempts ? { kind: 'release' } : { kind: 'fail' };
}
