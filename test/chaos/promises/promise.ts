import type { HistoryIndex } from '../history-index.js';

/** A broken promise: which, about which task, and the history lines (seq) that show it. */
export interface Violation {
  readonly promise: string;
  readonly taskId?: string;
  readonly message: string;
  readonly evidence: readonly number[];
}

/** One promise of the system, checked over a whole history. */
export interface SystemPromise {
  readonly name: string;
  /** The promise in one sentence, for the report. */
  readonly says: string;
  /** The violations, and how many cases (tasks, answers, cancels, samples) were checked. */
  check(index: HistoryIndex): { readonly violations: Violation[]; readonly checked: number };
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
