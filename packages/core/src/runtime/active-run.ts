import { TaskCancelledError } from '../errors/task-cancelled-error.js';
import type { RunClaim } from '../machine/task-state.js';
import type { TaskRef } from '../store/task-store.js';
import type { TaskLabels } from '../telemetry/task-telemetry.js';

/**
 * One run this node is executing: its abort controller, the input keys it waits on, and a pulse
 * that waiters sleep on until a signal, a poll tick or the abort wakes them.
 */
export class ActiveRun {
  readonly controller = new AbortController();
  /** Input keys the run is waiting on right now. */
  readonly waitingKeys = new Set<string>();
  #pulse: Promise<void>;
  #parked = false;
  #beat: () => void = () => {};

  /** What names the run in telemetry. */
  readonly labels: TaskLabels;

  constructor(
    readonly ref: TaskRef,
    readonly tool: string,
    /** What every write of this run carries; a row that no longer matches it fences the run off. */
    readonly claim: RunClaim,
    /** Whether the task is released instead of failed when this node gives the run up. */
    readonly resumable: boolean,
  ) {
    this.#pulse = this.#nextPulse();
    this.labels = { taskId: ref.taskId, tool, server: ref.owner.server };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the run gave its task back while waiting for input; its end writes nothing. */
  get parked(): boolean {
    return this.#parked;
  }

  /** The task was parked (see `TaskStore.park`): the run ends without an outcome, a later claim runs it again. */
  park(): void {
    this.#parked = true;
    this.abort();
  }

  /** Ends the run: the tool's signal fires and every waiter wakes to find it cancelled. */
  abort(): void {
    if (this.signal.aborted) return;
    this.controller.abort(new TaskCancelledError());
    this.wake();
  }

  /** Wakes every waiter so it re-reads the store. */
  wake(): void {
    const beat = this.#beat;
    this.#pulse = this.#nextPulse();
    beat();
  }

  /** Resolves at the next {@link wake} (or abort). */
  nextWake(): Promise<void> {
    return this.#pulse;
  }

  #nextPulse(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#beat = resolve;
    });
  }
}
