import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import { TaskCancelledError } from '../errors/task-cancelled-error.js';
import { admitInputRequest } from '../input/admit-input-request.js';
import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { InputRequest, InputResponse } from '../input/input-request.js';
import type { JsonValue } from '../json/json-value.js';
import type { InputAsk, TaskStep, TaskStore } from '../store/task-store.js';
import type { TaskRecord } from '../task/task-record.js';
import type { TaskTelemetry } from '../telemetry/task-telemetry.js';
import type { ActiveRun } from './active-run.js';
import type { RunContextHost } from './run-context.js';
import type { RunShares } from './run-shares.js';
import { markRuntimeFault } from './runtime-fault.js';
import { isStoreOutage, outageRetryDelay } from './store-outage.js';
import type { TaskErrorContext } from './task-run-request.js';

/** What {@link RunOperations} works through. */
export interface RunOperationsOptions {
  readonly store: TaskStore;
  readonly telemetry: TaskTelemetry;
  readonly onError: (error: unknown, task: TaskErrorContext) => void;
  /**
   * Whether a run waiting for input gives its slot back: a resumable task whose tool this node can
   * run again when it is claimed (waiting is not running), unless the node is draining (the drain
   * hands it over).
   */
  readonly mayPark: (run: ActiveRun) => boolean;
  /** The node's fair share: a run held back waits for its turn before it meets the store. */
  readonly shares: RunShares;
}

/**
 * What a run's context does in the store (`ctx.step`, `ctx.journal`, `ctx.progress`, the input
 * asks): one object per runtime, shared by every run. Every write carries the run's claim; a store
 * that is away is no news to a waiting run, and a resumable run whose journal the store refuses
 * is lost (handed over), not ended by what its tool does next.
 */
export class RunOperations implements RunContextHost {
  readonly #store: TaskStore;
  readonly #telemetry: TaskTelemetry;
  readonly #onError: (error: unknown, task: TaskErrorContext) => void;
  readonly #mayPark: (run: ActiveRun) => boolean;
  readonly #shares: RunShares;

  constructor(options: RunOperationsOptions) {
    this.#store = options.store;
    this.#telemetry = options.telemetry;
    this.#onError = options.onError;
    this.#mayPark = options.mayPark;
    this.#shares = options.shares;
  }

  /**
   * One journaled step: a finished one returns its journaled result; otherwise `fn` runs and its
   * result is journaled before it is returned. A run that no longer holds its task stops here.
   */
  async step<T extends JsonValue | void>(run: ActiveRun, name: string, fn: () => T | Promise<T>): Promise<T> {
    const superseded = (): never => {
      run.abort();
      throw new TaskCancelledError();
    };
    // A bad name or result is the tool's error; anything else the store throws is a runtime fault.
    const fault = (error: unknown): Promise<never> => {
      if (error instanceof InvalidTaskValueError) return Promise.reject(error);
      // A resumable run whose journal the store refused is handed over, not ended by its tool.
      if (run.resumable) run.lose();
      return Promise.reject(markRuntimeFault(error));
    };
    if (this.#shares.holds(run)) await this.#shares.turn(run);
    if (run.aborted) throw new TaskCancelledError();
    const begin = await this.#store.beginStep(run.ref, run.claim, name).catch(fault);
    if (begin.state === 'lost') return superseded();
    if (begin.state === 'done') return begin.result as T;
    const value = await fn();
    const journaled = await this.#store.finishStep(run.ref, run.claim, name, value === undefined ? null : (value as JsonValue)).catch(fault);
    if (!journaled) return superseded();
    return value;
  }

  async journal(run: ActiveRun): Promise<readonly TaskStep[]> {
    if (this.#shares.holds(run)) await this.#shares.turn(run);
    return this.#store.steps(run.ref).catch((error: unknown) => {
      // As for a step: a resumable run that cannot read its journal is handed over.
      if (run.resumable) run.lose();
      return Promise.reject(markRuntimeFault(error));
    });
  }

  /** Sets the status message (`ctx.progress`); no-op once the run was aborted. */
  async progress(run: ActiveRun, progress: number, total: number | undefined, message: string | undefined): Promise<void> {
    if (this.#shares.holds(run)) await this.#shares.turn(run);
    if (run.aborted) return;
    const text = message ?? (total === undefined ? `${progress}` : `${progress}/${total}`);
    let updated: TaskRecord | undefined;
    try {
      updated = await this.#store.setStatusMessage(run.ref, text, run.claim);
    } catch (error) {
      if (!isStoreOutage(error)) throw error;
      // A progress message that could not be written is lost, not fatal: the next one
      // (or the outcome) is written when the store is back.
      this.#onError(error, { ...run.ref, tool: run.tool });
      return;
    }
    // The task ended elsewhere and this is the first this node hears of it.
    if (!updated) run.abort();
  }

  ask(run: ActiveRun, capabilities: ClientCapabilities | undefined, key: string, request: InputRequest): Promise<InputResponse | undefined> {
    try {
      admitInputRequest(key, request, capabilities);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#awaitInput(run, key, request);
  }

  /**
   * Parks the run's task while `key` is outstanding; `true` when it did, and the run is over. A
   * store that fails keeps the run waiting (the slot stays taken, nothing is lost).
   */
  async #park(run: ActiveRun, key: string): Promise<boolean> {
    let parked: boolean;
    try {
      parked = await this.#store.park(run.ref, run.claim, key);
    } catch (error) {
      if (!isStoreOutage(error)) throw error;
      this.#onError(error, { ...run.ref, tool: run.tool });
      return false;
    }
    if (parked) run.park();
    return parked;
  }

  /**
   * Asks for input and waits for the answer; `undefined` when the task ended meanwhile. A store
   * that fails to answer is no news: the wait goes on, and the next wake (a notification, the
   * poll) or a backoff retry reads again, so an outage never ends the run or loses an answer.
   */
  async #awaitInput(run: ActiveRun, key: string, request: InputRequest): Promise<InputResponse | undefined> {
    run.startWaiting(key);
    this.#shares.changed(run);
    try {
      let asked = false;
      let parkTried = false;
      let failures = 0;
      for (;;) {
        if (run.aborted) return undefined;
        // Take the pulse before each read, so a wake that lands during the read is not lost.
        const wake = run.nextWake();
        let ask: InputAsk | undefined;
        try {
          ask = asked ? await this.#store.readInput(run.ref, key) : await this.#store.requestInput(run.ref, key, request, run.claim);
        } catch (error) {
          if (!isStoreOutage(error)) throw error;
          if (failures === 0) this.#onError(error, { ...run.ref, tool: run.tool });
          failures += 1;
        }
        if (ask) {
          failures = 0;
          if (!asked && ask.state === 'pending') {
            this.#telemetry.inputWait(run.labels);
            this.#telemetry.status(run.labels, 'input_required');
          }
          asked = true;
          if (ask.state === 'answered') return ask.response;
          if (ask.state === 'ended') {
            run.abort();
            return undefined;
          }
          if (!parkTried && this.#mayPark(run)) {
            parkTried = true;
            if (await this.#park(run, key)) throw new TaskCancelledError();
            // Answered meanwhile (or no longer ours): read again rather than wait for a wake.
            continue;
          }
          await wake;
        } else {
          await wakeOrDelay(wake, outageRetryDelay(failures));
        }
      }
    } catch (error) {
      // The park's own end is the run's; anything else that escapes the wait is a fault of the runtime or its store.
      throw run.parked ? error : markRuntimeFault(error);
    } finally {
      run.stopWaiting(key);
      this.#shares.changed(run);
    }
  }
}

/** Resolves at `wake` or after `ms`, whichever comes first. */
async function wakeOrDelay(wake: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([wake, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
