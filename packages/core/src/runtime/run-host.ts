import type { Context } from '@opentelemetry/api';
import { ErrorCode } from '../errors/error-codes.js';
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import { claimHolds, type RunClaim } from '../machine/task-state.js';
import type { TaskEvents, TaskNode } from '../store/task-events.js';
import type { TaskOutcome, TaskSignal, TaskStore, Unsubscribe } from '../store/task-store.js';
import type { TaskRecord } from '../task/task-record.js';
import { isTerminal } from '../task/task-status.js';
import type { Logger } from '../log/logger.js';
import { logSafe } from '../log/log-safe.js';
import type { RunTelemetry, TaskTelemetry } from '../telemetry/task-telemetry.js';
import { ActiveRun } from './active-run.js';
import { CancelHintCheck } from './cancel-hint-check.js';
import { ControlPoller } from './control-poller.js';
import { RunContext } from './run-context.js';
import { RunEnding } from './run-ending.js';
import { RunOperations } from './run-operations.js';
import { RunShares } from './run-shares.js';
import type { RpcErrorClassifier } from './rpc-error-of.js';
import type { TaskErrorContext, TaskRunRequest } from './task-run-request.js';

/** How long close and drain wait for aborted runs to unwind. */
const ABORT_GRACE_MS = 1_000;

/** What a {@link RunHost} is built from. */
export interface RunHostOptions {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  readonly node: TaskNode | undefined;
  readonly nodeId: string;
  readonly pollIntervalMs: number;
  readonly abortGraceMs: number;
  /** See `TaskRuntimeOptions.fairShareRuns`. */
  readonly fairShareRuns: number;
  readonly classify: RpcErrorClassifier;
  readonly telemetry: TaskTelemetry;
  readonly logger: Logger;
  readonly onError: (error: unknown, task: TaskErrorContext) => void;
  /** Whether a run waiting for input may give its task back (see `RunOperationsOptions.mayPark`). */
  readonly mayPark: (run: ActiveRun) => boolean;
  /** Told when a run no longer holds a slot here (it returned, or its abort's grace ran out). */
  readonly onSlotFreed: (run: ActiveRun) => void;
}

/**
 * The runs this node executes: starts each in the background with its context, carries the
 * signals of its task to it (a cancel aborts it, an answer wakes it, the backstop poll catches
 * what no signal said), writes how it ended, and gives its slot back when it returns or its
 * abort's grace runs out. Drain and close end them.
 */
export class RunHost {
  readonly #store: TaskStore;
  readonly #events: TaskEvents;
  readonly #nodeId: string;
  readonly #abortGraceMs: number;
  readonly #telemetry: TaskTelemetry;
  readonly #onError: (error: unknown, task: TaskErrorContext) => void;
  readonly #onSlotFreed: (run: ActiveRun) => void;
  readonly #runs = new Map<string, ActiveRun>();
  readonly #settled = new Map<string, Promise<void>>();
  /** The grace timers of aborted runs that have not returned yet. */
  readonly #graceTimers = new Map<ActiveRun, NodeJS.Timeout>();
  readonly #poller: ControlPoller;
  readonly #operations: RunOperations;
  readonly #shares: RunShares;
  readonly #ending: RunEnding;
  readonly #detachRuns: Unsubscribe;
  /** Set by close: the tasks of its runs are the lease's now. */
  #closed = false;
  #lastClaim: RunClaim | undefined;

  constructor(options: RunHostOptions) {
    const { store, node, logger } = options;
    this.#store = store;
    this.#events = options.events;
    this.#nodeId = options.nodeId;
    this.#abortGraceMs = options.abortGraceMs;
    this.#telemetry = options.telemetry;
    this.#onError = options.onError;
    this.#onSlotFreed = options.onSlotFreed;
    this.#poller = new ControlPoller(store, this.#runs, {
      intervalMs: options.pollIntervalMs,
      ...(node?.signalsProven ? { signalsProven: () => node.signalsProven!() } : {}),
      onError: (error) => logger.error({ err: logSafe(error) }, 'control poll failed'),
    });
    this.#shares = new RunShares(options.fairShareRuns);
    this.#operations = new RunOperations({ store, telemetry: options.telemetry, onError: options.onError, mayPark: options.mayPark, shares: this.#shares });
    this.#ending = new RunEnding({ store, classify: options.classify, telemetry: options.telemetry, onError: options.onError, closed: () => this.#closed });
    // Only this host knows which of its node's tasks a run holds; a store that rescues the
    // others (a finish that could not be written) asks it.
    this.#detachRuns = node?.attachRuns?.({ holds: (taskId) => this.#runs.has(taskId) }) ?? (() => {});
  }

  /** Runs on this node now. */
  get size(): number {
    return this.#runs.size;
  }

  /** The backstop poll: polls made so far, and the gap it waits now. */
  get backstop(): { readonly polls: number; readonly gapMs: number } {
    return { polls: this.#poller.polls, gapMs: this.#poller.gapMs };
  }

  /** The fair share of a contended node: runs of one owner in motion now (`Infinity`: not contended), and the runs held back. */
  get fairShare(): { readonly share: number; readonly heldBack: number } {
    return { share: this.#shares.share, heldBack: this.#shares.heldBack };
  }

  /** This node's run of the task, if it holds one. */
  run(taskId: string): ActiveRun | undefined {
    return this.#runs.get(taskId);
  }

  /** Registers and starts the run of a task this node holds (`record`, just created or claimed). */
  launch<Args>(record: TaskRecord, request: TaskRunRequest<Args>, parent: Context): void {
    const { taskId } = record;
    // The request's owner and tool name, equal to the record's: the caller holds them anyway, and
    // the row's copies (parsed per task) need not stay alive with the run.
    const run = new ActiveRun({ taskId, owner: request.owner }, request.tool, this.#claimOf(record.attempt), record.resumable, this.#startAbortGrace);
    this.#runs.set(taskId, run);
    this.#shares.add(run);
    // The closures of a run hold its id, never its record: a waiting run keeps no row in memory.
    const settled = this.#execute(run, request, parent).finally(() => {
      clearTimeout(this.#graceTimers.get(run));
      this.#graceTimers.delete(run);
      this.#freeSlot(run);
    });
    this.#settled.set(taskId, settled);
  }

  /**
   * Waits up to `deadlineMs` for the runs to finish, then ends the rest: a resumable task is
   * handed over (another node claims it and its journal resumes it), any other fails with a clear
   * error; then detaches from the node. A resumable task whose release cannot be written (the
   * store out) is left to the lease, as {@link close} leaves every run's: once this node is gone
   * its lease reaper releases it. Failing it would end a task another node could resume.
   */
  async drain(deadlineMs: number): Promise<void> {
    // What is left to run has until the deadline: nothing waits for a turn any more.
    this.#shares.lift();
    await this.#settledWithin(deadlineMs);
    const error: JsonRpcErrorObject = { code: ErrorCode.InternalError, message: 'The server shut down before the task finished' };
    await Promise.allSettled(
      [...this.#runs.values()].map(async (run) => {
        if (run.resumable) {
          // Undefined: the claim is gone (a cancel, another node's reaper), nothing left to hand over.
          const released = await this.#store.release(run.ref, run.claim).catch((failure: unknown) => {
            this.#onError(failure, { ...run.ref, tool: run.tool });
            return undefined;
          });
          if (released) this.#telemetry.handedOver(run.labels);
        } else await this.#ending.finish(run, { status: 'failed', error, statusMessage: error.message });
        run.abort();
      }),
    );
    await this.#settledWithin(ABORT_GRACE_MS);
    this.#poller.stop();
    this.#detachRuns();
  }

  /**
   * Aborts every run without recording anything (their tasks stay as they are, for another node's
   * lease reaper to settle) and waits briefly for them to unwind.
   */
  async close(): Promise<void> {
    this.#closed = true;
    // First: the tasks left as they are are the lease reaper's to settle, not the rescuer's.
    this.#detachRuns();
    this.#poller.stop();
    for (const run of this.#runs.values()) run.abort();
    await this.#settledWithin(ABORT_GRACE_MS);
  }

  /** The run no longer holds a slot here: it returned, or its abort's grace ran out. */
  #freeSlot(run: ActiveRun): void {
    // A parked run may still be unwinding when this node claims its task again: the new run's
    // entries are not this run's to remove.
    if (this.#runs.get(run.ref.taskId) !== run) return;
    this.#runs.delete(run.ref.taskId);
    this.#settled.delete(run.ref.taskId);
    this.#shares.remove(run);
    this.#onSlotFreed(run);
  }

  /** Every aborted run gets `abortGraceMs` to return (one function for all runs). */
  readonly #startAbortGrace = (run: ActiveRun): void => {
    if (!this.#settled.has(run.ref.taskId)) return;
    const timer = setTimeout(() => this.#abortIgnored(run), this.#abortGraceMs);
    timer.unref();
    this.#graceTimers.set(run, timer);
  };

  /**
   * The run did not return within its abort's grace: it stops counting against
   * `maxConcurrentRuns` (and as held: a rescuer may settle its task), and is counted and
   * reported. It writes nothing more: every write of an aborted run is refused.
   */
  #abortIgnored(run: ActiveRun): void {
    this.#graceTimers.delete(run);
    if (this.#runs.get(run.ref.taskId) !== run) return;
    this.#telemetry.abortIgnored(run.labels);
    this.#onError(new Error(`the run ignored its abort for ${this.#abortGraceMs} ms; its run slot is given back and whatever it writes is refused`), { ...run.ref, tool: run.tool });
    this.#freeSlot(run);
  }

  /** The claim of this node's run of an attempt; runs of one attempt share one (it is never changed). */
  #claimOf(attempt: number): RunClaim {
    if (this.#lastClaim?.attempt !== attempt) this.#lastClaim = { nodeId: this.#nodeId, attempt };
    return this.#lastClaim;
  }

  async #settledWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([Promise.allSettled([...this.#settled.values()]), deadline]);
    clearTimeout(timer);
  }

  async #execute<Args>(run: ActiveRun, request: TaskRunRequest<Args>, parent: Context): Promise<void> {
    // The listener holds the run, not its record: a waiting run keeps no row in memory.
    const unwatch = this.#events.watch(run.ref.taskId, (signal) => this.#signalled(run, signal));
    this.#poller.ensureRunning();
    const telemetry = this.#telemetry.runStarted(run.labels, parent);
    try {
      // Yield first, so the CreateTaskResult goes out before the tool does any work.
      await Promise.resolve();
      let outcome: TaskOutcome | undefined;
      try {
        const result = await telemetry.within(() => request.execute(request.args, new RunContext(run, this.#operations, request.clientCapabilities), request.carried));
        outcome = { status: 'completed', result };
      } catch (error) {
        if (!run.aborted) outcome = this.#ending.outcomeOfThrow(run, error, telemetry);
      }
      // An aborted run's end is never its task's outcome, however the tool left (returning what it
      // had, throwing its signal's reason): a cancel or an end elsewhere already settled the task,
      // a park left it for its answer, a drain settled it before aborting, and an abort of the
      // runtime's own (close, a lost lease, the database out for a whole lease) leaves it for the
      // lease, the rescuer or, when resumable, another node's run.
      const written = outcome && !run.aborted ? await this.#ending.finish(run, outcome) : undefined;
      if (run.lost) await this.#ending.handOverLost(run);
      await this.#reportEnd(run, telemetry, written);
    } finally {
      unwatch();
    }
  }

  /** A signal for the run: an answer wakes its waiters, a confirmed cancel aborts it, a hint is checked against the row first. */
  #signalled(run: ActiveRun, signal: TaskSignal): void {
    if (signal.kind !== 'cancelled') return run.wake();
    if (signal.confirmed) return this.abort(run);
    if (run.aborted) return;
    // Made at the first hint: most runs never get one.
    run.hints ??= new CancelHintCheck(
      async () => {
        // Ended, or held by a later claim (this run was superseded): as the backstop poll judges it.
        const state = (await this.#store.controlStates([run.ref])).get(run.ref.taskId);
        return !state || isTerminal(state.status) || !claimHolds(state, run.claim);
      },
      () => this.abort(run),
      (error) => this.#onError(error, { ...run.ref, tool: run.tool }),
    );
    run.hints.hint();
  }

  /** Aborts a run on a cancel this node learnt of, measuring how long the news took. */
  abort(run: ActiveRun): void {
    if (!run.aborted) void this.#measureCancelDelivery(run);
    run.abort();
  }

  /** Closes the run's telemetry with the status the store holds now. */
  async #reportEnd(run: ActiveRun, telemetry: RunTelemetry, written: TaskRecord | undefined): Promise<void> {
    let final = written;
    if (!final) {
      // No outcome, or it lost its compare-and-set (a cancel won, the task expired): say what stands.
      final = await this.#store.get(run.ref).catch(() => undefined);
      // A run that parked, was handed over or was given up did not finish its task.
      if (final && !isTerminal(final.status)) {
        return telemetry.leftLive(run.parked ? 'parked' : final.nodeId === null ? 'released' : 'left', final.status);
      }
    } else {
      this.#telemetry.status(run.labels, final.status);
    }
    telemetry.ended(final?.status ?? null, { result: final?.result ?? undefined, error: final?.error ?? undefined });
  }

  async #measureCancelDelivery(run: ActiveRun): Promise<void> {
    const noticedAt = Date.now();
    const task = await this.#store.get(run.ref).catch(() => undefined);
    if (task?.status === 'cancelled') this.#telemetry.cancelDelivered((noticedAt - task.lastUpdatedAt.getTime()) / 1000);
  }
}
