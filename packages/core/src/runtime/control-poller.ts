import type { TaskStore } from '../store/task-store.js';
import { claimHolds } from '../machine/task-state.js';
import { isTerminal } from '../task/task-status.js';
import type { ActiveRun } from './active-run.js';

/** How far the backstop stretches while signals are proven to arrive: up to this many poll intervals. */
export const MAX_BACKSTOP_STRETCH = 32;

/** Options of {@link ControlPoller}. */
export interface ControlPollerOptions {
  /** The poll interval while signals are not known to arrive (`pollIntervalMs`). */
  readonly intervalMs: number;
  /**
   * Whether the node's signals have proved they arrive (its listener listens and its last check
   * passed). While they have, the poll doubles its gap after each poll up to
   * {@link MAX_BACKSTOP_STRETCH} intervals; the first tick that sees them unproven polls and
   * returns to `intervalMs`. Absent: always `intervalMs`.
   */
  readonly signalsProven?: () => boolean;
  readonly onError: (error: unknown) => void;
  /** The clock, in ms (tests). Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * The backstop for signals that never came (a dropped notification, a listener that reconnected):
 * one batched read of the control state of every run on this node, every `intervalMs` while
 * nothing says signals arrive, less often while the node's listener proves itself. A run whose
 * task ended elsewhere is aborted; a waiter whose key was answered is woken.
 */
export class ControlPoller {
  readonly #store: TaskStore;
  readonly #runs: ReadonlyMap<string, ActiveRun>;
  readonly #intervalMs: number;
  readonly #signalsProven: () => boolean;
  readonly #onError: (error: unknown) => void;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #gapMs: number;
  #lastPollAt = -Infinity;
  /** Polls made (tests and benchmarks read it). */
  polls = 0;

  constructor(store: TaskStore, runs: ReadonlyMap<string, ActiveRun>, options: ControlPollerOptions) {
    this.#store = store;
    this.#runs = runs;
    this.#intervalMs = options.intervalMs;
    this.#signalsProven = options.signalsProven ?? (() => false);
    this.#onError = options.onError;
    this.#now = options.now ?? (() => performance.now());
    this.#gapMs = options.intervalMs;
  }

  /** The gap the next poll waits for after the last one, ms. */
  get gapMs(): number {
    return this.#gapMs;
  }

  /** Starts ticking if there is anything to watch. Idempotent. */
  ensureRunning(): void {
    if (this.#timer || this.#runs.size === 0) return;
    // Not unref'd: while runs are live the process has work to do, and the timer stops with the last run.
    this.#timer = setInterval(() => void this.#tick(), this.#intervalMs);
  }

  /** Every interval: poll now unless signals are proven and the stretched gap has not passed. */
  async #tick(): Promise<void> {
    if (!this.#signalsProven()) {
      this.#gapMs = this.#intervalMs;
    } else if (this.#now() - this.#lastPollAt < this.#gapMs) {
      return;
    } else {
      this.#gapMs = Math.min(this.#gapMs * 2, this.#intervalMs * MAX_BACKSTOP_STRETCH);
    }
    await this.pollOnce();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One poll; skipped while the previous one is still out. */
  async pollOnce(): Promise<void> {
    if (this.#polling) return;
    if (this.#runs.size === 0) {
      this.stop();
      return;
    }
    this.#polling = true;
    this.#lastPollAt = this.#now();
    this.polls += 1;
    try {
      const runs = [...this.#runs.values()];
      const states = await this.#store.controlStates(runs.map((run) => run.ref));
      for (const run of runs) {
        const state = states.get(run.ref.taskId);
        // Superseded: another attempt holds the task now (this node was reaped while it stalled).
        if (!state || isTerminal(state.status) || !claimHolds(state, run.claim)) {
          run.abort();
        } else if (run.waitingKeys.some((key) => !state.outstandingKeys.includes(key))) {
          run.wake();
        }
      }
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#polling = false;
    }
  }
}
