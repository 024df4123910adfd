import { TaskCancelledError } from '../errors/task-cancelled-error.js';
import type { RunClaim } from '../machine/task-state.js';
import type { TaskRef } from '../store/task-store.js';
import type { TaskLabels } from '../telemetry/task-telemetry.js';
import type { CancelHintCheck } from './cancel-hint-check.js';

const NO_KEYS: readonly string[] = [];

/**
 * One run this node is executing: whether it was aborted, the input keys it waits on, and a pulse
 * that waiters sleep on until a signal, a poll tick or the abort wakes them.
 *
 * A node may hold many thousand runs that wait for input, so a run keeps little: its
 * `AbortController` (an EventTarget, the largest thing a run would hold) is made only when the
 * tool reads its signal, and its cancel-hint check only when a hint comes.
 */
export class ActiveRun {
  #controller: AbortController | undefined;
  /** The abort's reason once the run was aborted. */
  #reason: TaskCancelledError | undefined;
  /** Input keys the run is waiting on right now, replaced on change (rarely more than one). */
  #waitingKeys: readonly string[] = NO_KEYS;
  #pulse: Promise<void>;
  #parked = false;
  #lost = false;
  #beat: () => void = () => {};
  /** Checks cancel hints against the row; made by the runtime at the first hint. */
  hints: CancelHintCheck | undefined;

  constructor(
    readonly ref: TaskRef,
    readonly tool: string,
    /** What every write of this run carries; a row that no longer matches it fences the run off. */
    readonly claim: RunClaim,
    /** Whether the task is released instead of failed when this node gives the run up. */
    readonly resumable: boolean,
    /** Told once, when the run is aborted (one function shared by the runtime's runs). */
    readonly onAborted: (run: ActiveRun) => void = () => {},
  ) {
    this.#pulse = this.#nextPulse();
  }

  /** What names the run in telemetry. */
  get labels(): TaskLabels {
    return { taskId: this.ref.taskId, tool: this.tool, server: this.ref.owner.server, owner: this.ref.owner };
  }

  /** The tool's signal: aborted with a `TaskCancelledError` when the run ends (also if it ended before it was read). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Whether the run was aborted (what `signal.aborted` says, without making the signal). */
  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  /** Whether the run gave its task back while waiting for input; its end writes nothing. */
  get parked(): boolean {
    return this.#parked;
  }

  /** Whether the run lost its footing in the store (its journal could not be written); its end writes nothing. */
  get lost(): boolean {
    return this.#lost;
  }

  /**
   * The store refused the run's journal (a dropped connection, a restarting database): what the
   * tool does next (return what it had, throw the error on) is not its task's outcome. The run
   * ends like a park, and the runtime hands the task over to be resumed from its journal.
   */
  lose(): void {
    this.#lost = true;
    this.abort();
  }

  /** Input keys the run is waiting on right now. */
  get waitingKeys(): readonly string[] {
    return this.#waitingKeys;
  }

  /** The run waits on `key` (until {@link stopWaiting}). */
  startWaiting(key: string): void {
    // concat: an array of exactly the keys (a spread would reserve room to grow).
    if (!this.#waitingKeys.includes(key)) this.#waitingKeys = this.#waitingKeys.concat(key);
  }

  stopWaiting(key: string): void {
    const rest = this.#waitingKeys.filter((waiting) => waiting !== key);
    this.#waitingKeys = rest.length === 0 ? NO_KEYS : rest;
  }

  /** The task was parked (see `TaskStore.park`): the run ends without an outcome, a later claim runs it again. */
  park(): void {
    this.#parked = true;
    this.abort();
  }

  /** Ends the run: the tool's signal fires and every waiter wakes to find it cancelled. */
  abort(): void {
    if (this.#reason) return;
    this.#reason = new TaskCancelledError();
    this.#controller?.abort(this.#reason);
    this.wake();
    this.onAborted(this);
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
