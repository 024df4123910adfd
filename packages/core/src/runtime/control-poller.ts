import type { TaskStore } from '../store/task-store.js';
import { claimHolds } from '../machine/task-state.js';
import { isTerminal } from '../task/task-status.js';
import type { ActiveRun } from './active-run.js';

/**
 * The backstop for signals that never came (a dropped notification, a listener that reconnected):
 * every `intervalMs`, one batched read of the control state of every run on this node. A run
 * whose task ended elsewhere is aborted; a waiter whose key was answered is woken.
 */
export class ControlPoller {
  readonly #store: TaskStore;
  readonly #runs: ReadonlyMap<string, ActiveRun>;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(store: TaskStore, runs: ReadonlyMap<string, ActiveRun>, intervalMs: number, onError: (error: unknown) => void) {
    this.#store = store;
    this.#runs = runs;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  /** Starts ticking if there is anything to watch. Idempotent. */
  ensureRunning(): void {
    if (this.#timer || this.#runs.size === 0) return;
    // Not unref'd: while runs are live the process has work to do, and the timer stops with the last run.
    this.#timer = setInterval(() => void this.pollOnce(), this.#intervalMs);
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
    try {
      const runs = [...this.#runs.values()];
      const states = await this.#store.controlStates(runs.map((run) => run.ref));
      for (const run of runs) {
        const state = states.get(run.ref.taskId);
        // Superseded: another attempt holds the task now (this node was reaped while it stalled).
        if (!state || isTerminal(state.status) || !claimHolds(state, run.claim)) {
          run.abort();
        } else if ([...run.waitingKeys].some((key) => !state.outstandingKeys.includes(key))) {
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
