import { ErrorCode } from '../errors/error-codes.js';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import { JsonRpcError, type JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { TaskOutcome, TaskStore } from '../store/task-store.js';
import type { TaskRecord } from '../task/task-record.js';
import type { RunTelemetry, TaskTelemetry } from '../telemetry/task-telemetry.js';
import type { ActiveRun } from './active-run.js';
import type { RpcErrorClassifier } from './rpc-error-of.js';
import { internalErrorWithRef, isRuntimeFault, newErrorRef } from './runtime-fault.js';
import type { TaskErrorContext } from './task-run-request.js';
import { toolErrorResult } from './tool-error-result.js';

const FINISH_RETRY_DELAYS_MS = [50, 250, 1_000, 4_000];
/** Releases of a lost run tried at most (the last delay apart: about a minute), then the lease decides. */
const HAND_OVER_RETRIES = 18;

/** What {@link RunEnding} writes through and reports to. */
export interface RunEndingOptions {
  readonly store: TaskStore;
  readonly classify: RpcErrorClassifier;
  readonly telemetry: TaskTelemetry;
  readonly onError: (error: unknown, task: TaskErrorContext) => void;
  /** Whether the runtime was closed: the tasks of its runs are the lease's then. */
  readonly closed: () => boolean;
}

/**
 * How a run's end becomes its task's: what a tool's throw means (a JSON-RPC error fails the
 * task, a runtime fault fails it with a reference, anything else is the tool's error result),
 * the outcome's compare-and-set write, retried through store blips, and the hand-over of a run
 * that lost its journal.
 */
export class RunEnding {
  readonly #options: RunEndingOptions;

  constructor(options: RunEndingOptions) {
    this.#options = options;
  }

  /** The outcome of a tool that threw `error`. */
  outcomeOfThrow(run: ActiveRun, error: unknown, telemetry: RunTelemetry): TaskOutcome {
    const rpcError = this.#options.classify(error);
    telemetry.threw(error, rpcError);
    if (rpcError) return { status: 'failed', error: rpcError, statusMessage: `Tool execution failed: ${rpcError.message}` };
    if (isRuntimeFault(error)) {
      const ref = newErrorRef();
      this.#options.onError(error, { ...run.ref, tool: run.tool, ref });
      const internal = internalErrorWithRef(ref);
      return { status: 'failed', error: internal, statusMessage: internal.message };
    }
    // The tool's own error: a result, not a protocol fault (the spec keeps `failed` for JSON-RPC
    // errors), and the same result the inline path gives.
    return { status: 'completed', result: toolErrorResult(error) };
  }

  /** Writes the outcome, compare-and-set; retries store failures so a blip does not strand the task. */
  async finish(run: ActiveRun, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    let replaced = false;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.#options.store.finish(run.ref, outcome, run.claim);
      } catch (error) {
        if (error instanceof InvalidTaskValueError && !replaced) {
          // The tool returned or threw something that cannot be stored (not JSON, too large, not
          // Unicode text): that is a failure of the call, and the client is told why, once; the
          // replacement is the validator's own message, which always stores.
          const what = outcome.status === 'completed' ? 'The tool returned an invalid result' : 'The tool failed with an error that cannot be stored';
          const invalid: JsonRpcErrorObject = { code: ErrorCode.InternalError, message: `${what}: ${error.message}` };
          outcome = { status: 'failed', error: invalid, statusMessage: invalid.message };
          replaced = true;
          continue;
        }
        const delay = FINISH_RETRY_DELAYS_MS[attempt];
        if (error instanceof JsonRpcError || delay === undefined) {
          this.#options.onError(error, { ...run.ref, tool: run.tool });
          return undefined;
        }
        await sleep(delay);
      }
    }
  }

  /**
   * Releases the task of a run that lost its journal, for another run (on any node, this one
   * included) to resume: retried while the store is out, for as long as the run could still hold
   * its task. A release that finds the claim gone (a cancel, another node's reaper) is done; a
   * node that closes leaves the task to the lease, as it leaves every run's.
   */
  async handOverLost(run: ActiveRun): Promise<void> {
    for (let attempt = 0; !this.#options.closed(); attempt += 1) {
      try {
        if (await this.#options.store.release(run.ref, run.claim)) this.#options.telemetry.handedOver(run.labels);
        return;
      } catch (error) {
        if (error instanceof JsonRpcError || attempt >= HAND_OVER_RETRIES) return this.#options.onError(error, { ...run.ref, tool: run.tool });
        await sleep(FINISH_RETRY_DELAYS_MS[Math.min(attempt, FINISH_RETRY_DELAYS_MS.length - 1)]!);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
