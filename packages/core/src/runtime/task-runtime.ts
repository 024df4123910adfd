import { randomUUID } from 'node:crypto';
import { context as otelContext, type Context } from '@opentelemetry/api';
import { ErrorCode } from '../errors/error-codes.js';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import { JsonRpcError, type JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import { MalformedInputResponseError } from '../errors/malformed-input-response-error.js';
import { TaskCancelledError } from '../errors/task-cancelled-error.js';
import { TaskNotFoundError } from '../errors/task-not-found-error.js';
import { admitInputRequest } from '../input/admit-input-request.js';
import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { InputRequest, InputResponse, InputResponses } from '../input/input-request.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import type { FollowedTask, TaskEvents, TaskNode } from '../store/task-events.js';
import type { InputAsk, TaskOutcome, TaskRef, TaskSignal, TaskStore, Unsubscribe } from '../store/task-store.js';
import { toDetailedTask, type DetailedTask } from '../task/detailed-task.js';
import { newTaskId } from '../task/task-id.js';
import { isTerminal } from '../task/task-status.js';
import type { TaskOwner } from '../task/task-owner.js';
import { DEFAULT_MAX_ATTEMPTS, type TaskRecord, type TaskSnapshot } from '../task/task-record.js';
import { logSafe } from '../log/log-safe.js';
import { defaultLogger } from '../log/default-logger.js';
import type { Logger } from '../log/logger.js';
import { ActiveRun } from './active-run.js';
import { CancelHintCheck } from './cancel-hint-check.js';
import { claimHolds, stateOf, type RunClaim } from '../machine/task-state.js';
import { isClaimable } from '../machine/decide-park.js';
import { ControlPoller } from './control-poller.js';
import { classifyOwnRpcError, type RpcErrorClassifier } from './rpc-error-of.js';
import { internalErrorWithRef, isRuntimeFault, markRuntimeFault, newErrorRef } from './runtime-fault.js';
import { RunContext, type RunContextHost } from './run-context.js';
import type { TaskContext } from './task-context.js';
import { toolErrorResult } from './tool-error-result.js';
import { fromStoredCapabilities, toStoredCapabilities } from './stored-capabilities.js';
import { RuntimeDrainingError } from './runtime-draining-error.js';
import { isStoreOutage, outageRetryDelay } from './store-outage.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { TaskTelemetry, type RunTelemetry, type TaskLabels, type TelemetryOptions } from '../telemetry/task-telemetry.js';
import { creatorContext, linkToCreator, traceparentOf } from '../telemetry/task-trace-context.js';

/**
 * A tool's task body: returns the tool result (a `CallToolResult` object) or throws. `carried` is
 * what the creating request carried for the run ({@link TaskRunRequest.carried}), on the node
 * that created the task and on one that claimed it alike.
 */
export type TaskExecute<Args> = (args: Args, ctx: TaskContext, carried?: JsonObject) => Promise<JsonObject> | JsonObject;

/** Options of {@link TaskRuntime}; every field but `store` has the seed's default. */
export interface TaskRuntimeOptions {
  /** Where tasks live: `MemoryTaskStore` on one node, `PostgresTaskStore` on several. */
  readonly store: TaskStore;
  /**
   * The cluster node this runtime runs on (`PostgresTaskNode`): its id is recorded on the tasks it
   * runs, and its events carry cancels and answers from other nodes. Default: the store's own
   * events (`MemoryTaskStore`), else none (the backstop poll alone).
   */
  readonly node?: TaskNode;
  /** This node's id, for a runtime without a `node` (telemetry, and the tasks it runs). Default: `node.nodeId`, else a random UUID. */
  readonly nodeId?: string;
  /** Time to live from creation, `null` for unlimited. Default one hour. */
  readonly ttlMs?: number | null;
  /** Suggested client poll interval, and this node's backstop poll for signals. Default 1 000. */
  readonly pollIntervalMs?: number;
  /** Live tasks one owner may have at once (`Infinity` for no limit). Default 100. */
  readonly maxPerPrincipal?: number;
  /** Recognises JSON-RPC errors thrown by tools (the MCP layer adds the SDK's). */
  readonly classifyError?: RpcErrorClassifier;
  /**
   * Called with errors that reach no client: a fault of the runtime or its store inside a run
   * (the client sees "Internal error (ref …)" and `ref` is that reference), a store write that failed.
   */
  readonly onError?: (error: unknown, task: TaskErrorContext) => void;
  /** Where the runtime logs (each task's creation and end at `info`, faults at `error`). Default: {@link defaultLogger}. */
  readonly logger?: Logger;
  /** OpenTelemetry providers; default: the global ones (no-ops until an SDK starts). */
  readonly telemetry?: TelemetryOptions;
  /**
   * Runs this node executes at once (`Infinity`: no limit, the default). A task started beyond it
   * is committed `working` with no run, and the first node with a free slot claims it; that needs
   * the tool registered ({@link TaskRuntime.registerTool}) on the nodes.
   */
  readonly maxConcurrentRuns?: number;
  /** Runs a resumable task may lose (its node died or was found stale) before it fails. Default 3; hand-overs do not count. */
  readonly maxAttempts?: number;
  /**
   * How long an aborted run (cancelled, superseded, given up by its node) may take to return
   * before it stops counting against {@link maxConcurrentRuns} (ms). JavaScript cannot stop a
   * function that ignores its signal; past this its slot is given back, it is counted
   * (`mcp_tasks.runs.ignored_abort`) and reported to `onError`, and whatever it writes when it
   * wakes stays refused. Default 5 000.
   */
  readonly abortGraceMs?: number;
}

/** How a node runs a tool's tasks it claims: the tool's body, found by the task's tool name. */
export interface TaskExecutor {
  readonly execute: TaskExecute<never>;
  /** Whether a task of the tool is released for another run (instead of failed) when its node gives it up. */
  readonly resumable: boolean;
}

/** Which task an error passed to `onError` belongs to; `ref` is the reference the client was shown, if any. */
export type TaskErrorContext = TaskRef & { tool: string; ref?: string };

/** What {@link TaskRuntime.start} runs. */
export interface TaskRunRequest<Args> {
  readonly owner: TaskOwner;
  readonly tool: string;
  /** Scopes the tool required; recorded on the task. */
  readonly scopes?: readonly string[];
  readonly args: Args;
  readonly execute: TaskExecute<Args>;
  /**
   * The client capabilities the creating request declared. Input the tool asks for must be
   * covered by them (`InputNotSupportedError` otherwise); `undefined` checks nothing (the
   * capabilities are not known, e.g. for 2025-11-25 clients). Stored with the task, so a later
   * run on any node checks the same capabilities.
   */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * What a run of the task needs from the creating request beyond its arguments (the MCP layer's
   * protocol revision, `prepare`'s value), stored with the task so that a node claiming it gets
   * the same; handed to `execute` as its third argument. It counts against the stored client
   * capabilities' size limit.
   */
  readonly carried?: JsonObject;
  /**
   * The time to live the client asked for (2025-11-25 `params.task.ttl`): honoured up to the
   * runtime's `ttlMs`, never beyond it. Default: the runtime's `ttlMs`.
   */
  readonly ttlMs?: number;
  /** Whether the task survives the loss of its node (see {@link TaskExecutor.resumable}). Default false. */
  readonly resumable?: boolean;
  /**
   * Whether an operator may run the task again as a new task with the same arguments and owner
   * once it failed or was cancelled. Default: {@link resumable} (a tool that may run twice).
   * Stored with the task only when it differs from that default.
   */
  readonly retry?: boolean;
}

/** The status message of a task waiting for a free run slot. */
export const QUEUED_STATUS_MESSAGE = 'Queued: waiting for a free run slot';

const DEFAULTS = { ttlMs: 3_600_000, pollIntervalMs: 1_000, maxPerPrincipal: 100, abortGraceMs: 5_000 } as const;

const FINISH_RETRY_DELAYS_MS = [50, 250, 1_000, 4_000];
/** Releases of a lost run tried at most (the last delay apart: about a minute), then the lease decides. */
const HAND_OVER_RETRIES = 18;

/** How long close and drain wait for aborted runs to unwind. */
const ABORT_GRACE_MS = 1_000;

/**
 * Runs tools as tasks: commits the task, runs the tool in the background, records how it ended,
 * and carries cancels and input answers to the run wherever they were received.
 */
export class TaskRuntime {
  readonly store: TaskStore;
  readonly nodeId: string;
  readonly #events: TaskEvents;
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  readonly maxPerPrincipal: number;
  readonly #classify: RpcErrorClassifier;
  readonly #onError: (error: unknown, task: TaskErrorContext) => void;
  readonly #runs = new Map<string, ActiveRun>();
  readonly #settled = new Map<string, Promise<void>>();
  readonly #poller: ControlPoller;
  readonly #telemetry: TaskTelemetry;
  readonly #logger: Logger;
  readonly #detachRuns: Unsubscribe;
  readonly maxConcurrentRuns: number;
  readonly maxAttempts: number;
  readonly abortGraceMs: number;
  /** The grace timers of aborted runs that have not returned yet. */
  readonly #graceTimers = new Map<ActiveRun, NodeJS.Timeout>();
  readonly #executors = new Map<string, TaskExecutor>();
  #claimTimer: NodeJS.Timeout | undefined;
  #unclaimable: Unsubscribe = () => {};
  #claiming = false;
  #claimAgain = false;
  /** Slots taken by tasks being committed to run here, so concurrent starts cannot overshoot. */
  #reserved = 0;
  #draining = false;
  /** Set by close: the tasks of its runs are the lease's now. */
  #closed = false;
  #lastClaim: RunClaim | undefined;

  constructor(options: TaskRuntimeOptions) {
    this.store = options.store;
    const { node } = options;
    if (node && options.nodeId !== undefined && options.nodeId !== node.nodeId) {
      throw new RangeError(`nodeId ${JSON.stringify(options.nodeId)} differs from the node's id ${JSON.stringify(node.nodeId)}`);
    }
    this.nodeId = node?.nodeId ?? options.nodeId ?? randomUUID();
    this.#events = node ?? options.store.events ?? noEvents(options.store);
    this.ttlMs = options.ttlMs === undefined ? DEFAULTS.ttlMs : options.ttlMs;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULTS.pollIntervalMs;
    this.maxPerPrincipal = options.maxPerPrincipal ?? DEFAULTS.maxPerPrincipal;
    if (this.ttlMs !== null && !(Number.isSafeInteger(this.ttlMs) && this.ttlMs > 0)) {
      throw new RangeError('ttlMs must be a positive integer or null');
    }
    if (!(Number.isSafeInteger(this.pollIntervalMs) && this.pollIntervalMs > 0)) throw new RangeError('pollIntervalMs must be a positive integer');
    if (!(this.maxPerPrincipal === Infinity || (Number.isSafeInteger(this.maxPerPrincipal) && this.maxPerPrincipal > 0))) {
      throw new RangeError('maxPerPrincipal must be a positive integer or Infinity');
    }
    this.maxConcurrentRuns = options.maxConcurrentRuns ?? Infinity;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (!(this.maxConcurrentRuns === Infinity || (Number.isSafeInteger(this.maxConcurrentRuns) && this.maxConcurrentRuns > 0))) {
      throw new RangeError('maxConcurrentRuns must be a positive integer or Infinity');
    }
    if (!(Number.isSafeInteger(this.maxAttempts) && this.maxAttempts > 0 && this.maxAttempts <= 1_000)) throw new RangeError('maxAttempts must be an integer from 1 to 1000');
    this.abortGraceMs = options.abortGraceMs ?? DEFAULTS.abortGraceMs;
    if (!(Number.isSafeInteger(this.abortGraceMs) && this.abortGraceMs >= 0)) throw new RangeError('abortGraceMs must be a non-negative integer');
    const classify = options.classifyError;
    this.#classify = classify ? (error) => classifyOwnRpcError(error) ?? classify(error) : classifyOwnRpcError;
    const logger = options.logger ?? defaultLogger();
    this.#logger = logger;
    this.#onError =
      options.onError ??
      ((error, task) => logger.error({ taskId: task.taskId, tool: task.tool, ...(task.ref === undefined ? {} : { ref: task.ref }), err: logSafe(error) }, 'task run fault'));
    this.#telemetry = new TaskTelemetry(this.nodeId, options.telemetry, logger);
    this.#poller = new ControlPoller(this.store, this.#runs, {
      intervalMs: this.pollIntervalMs,
      ...(node?.signalsProven ? { signalsProven: () => node.signalsProven!() } : {}),
      onError: (error) => logger.error({ err: logSafe(error) }, 'control poll failed'),
    });
    // Only this runtime knows which of its node's tasks a run holds; a store that rescues the
    // others (a finish that could not be written) asks it.
    this.#detachRuns = node?.attachRuns?.({ holds: (taskId) => this.#runs.has(taskId) }) ?? (() => {});
  }

  /** The backstop poll: polls made so far, and the gap it waits now (longer while signals are proven). */
  get backstop(): { readonly polls: number; readonly gapMs: number } {
    return { polls: this.#poller.polls, gapMs: this.#poller.gapMs };
  }

  /** Runs on this node now. */
  get running(): number {
    return this.#runs.size;
  }

  /** Whether the runtime stopped taking new tasks. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Commits a new task and starts its run in the background; resolves once the task is durable.
   * Throws `QuotaExceededError` when the owner has `maxPerPrincipal` live tasks, and
   * {@link RuntimeDrainingError} once {@link drain} began.
   */
  async start<Args>(request: TaskRunRequest<Args>): Promise<TaskRecord> {
    if (this.#draining) throw new RuntimeDrainingError();
    // The span of the request that creates the task: the run's span becomes its child.
    const parent = otelContext.active();
    // Beyond capacity the task is queued for whichever node has a slot first (this one included),
    // which needs its tool registered there; the reservation counts until the run registers.
    const queued = this.#runs.size + this.#reserved >= this.maxConcurrentRuns;
    if (queued && !this.#executors.has(request.tool)) {
      throw new RangeError(`tool ${request.tool} must be registered (registerTool) to be queued beyond maxConcurrentRuns`);
    }
    if (!queued) this.#reserved += 1;
    let record: TaskRecord;
    try {
      record = await this.store.create(
        {
          taskId: newTaskId(),
          owner: request.owner,
          tool: request.tool,
          scopes: request.scopes ?? [],
          ttlMs: ttlOf(request.ttlMs, this.ttlMs),
          pollIntervalMs: this.pollIntervalMs,
          nodeId: queued ? null : this.nodeId,
          ...(queued ? { statusMessage: QUEUED_STATUS_MESSAGE } : {}),
          args: (request.args ?? null) as JsonValue,
          clientCapabilities: toStoredCapabilities(
            request.clientCapabilities,
            request.carried,
            request.retry === undefined || request.retry === (request.resumable ?? false) ? undefined : request.retry,
          ),
          resumable: request.resumable ?? false,
          maxAttempts: this.maxAttempts,
          traceContext: traceparentOf(parent),
        },
        { maxLive: this.maxPerPrincipal },
      );
    } catch (error) {
      if (error instanceof QuotaExceededError) this.#telemetry.quotaRefused(request.tool, request.owner.server);
      throw error;
    } finally {
      if (!queued) this.#reserved -= 1;
    }
    this.#telemetry.created(labelsOf(record));
    if (queued) {
      this.#ensureClaiming();
      this.#claimSoon();
      return record;
    }
    this.#launch(record, request, parent);
    return record;
  }

  /**
   * Registers how this node runs `name`'s tasks that it claims (queued beyond a node's capacity,
   * or released by a node that was lost or drained), and starts claiming them.
   */
  registerTool(name: string, executor: TaskExecutor): void {
    this.#executors.set(name, executor);
    this.#ensureClaiming();
  }

  /** Registers and starts the run of a task this node holds. */
  #launch<Args>(record: TaskRecord, request: TaskRunRequest<Args>, parent: Context): void {
    const { taskId } = record;
    // The request's owner and tool name, equal to the record's: the caller holds them anyway, and
    // the row's copies (parsed per task) need not stay alive with the run.
    const run = new ActiveRun({ taskId, owner: request.owner }, request.tool, this.#claimOf(record.attempt), record.resumable, this.#startAbortGrace);
    this.#runs.set(taskId, run);
    // The closures of a run hold its id, never its record: a waiting run keeps no row in memory.
    const settled = this.#execute(run, request, parent).finally(() => {
      clearTimeout(this.#graceTimers.get(run));
      this.#graceTimers.delete(run);
      this.#freeSlot(run);
    });
    this.#settled.set(taskId, settled);
  }

  /** The run no longer holds a slot here: it returned, or its abort's grace ran out. */
  #freeSlot(run: ActiveRun): void {
    // A parked run may still be unwinding when this node claims its task again: the new run's
    // entries are not this run's to remove.
    if (this.#runs.get(run.ref.taskId) !== run) return;
    this.#runs.delete(run.ref.taskId);
    this.#settled.delete(run.ref.taskId);
    // A freed slot may take a queued task; without a limit nothing waits for one, and the
    // hot path pays no claim query per finished run.
    if (Number.isFinite(this.maxConcurrentRuns)) this.#claimSoon();
  }

  /** Every aborted run gets `abortGraceMs` to return (one function for all runs). */
  readonly #startAbortGrace = (run: ActiveRun): void => {
    if (!this.#settled.has(run.ref.taskId)) return;
    const timer = setTimeout(() => this.#abortIgnored(run), this.abortGraceMs);
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
    this.#onError(new Error(`the run ignored its abort for ${this.abortGraceMs} ms; its run slot is given back and whatever it writes is refused`), { ...run.ref, tool: run.tool });
    this.#freeSlot(run);
  }

  /** The claim of this node's run of an attempt; runs of one attempt share one (it is never changed). */
  #claimOf(attempt: number): RunClaim {
    if (this.#lastClaim?.attempt !== attempt) this.#lastClaim = { nodeId: this.nodeId, attempt };
    return this.#lastClaim;
  }

  /** Listens for claimable tasks and polls for them as a backstop, once a tool is registered. */
  #ensureClaiming(): void {
    if (this.#claimTimer || this.#draining || this.#executors.size === 0) return;
    this.#unclaimable = this.#events.onClaimable?.(() => this.#claimSoon()) ?? (() => {});
    this.#claimTimer = setInterval(() => this.#claimSoon(), this.pollIntervalMs);
    // The claim poll alone keeps no process alive.
    this.#claimTimer.unref();
    this.#claimSoon();
  }

  #stopClaiming(): void {
    clearInterval(this.#claimTimer);
    this.#claimTimer = undefined;
    this.#unclaimable();
    this.#unclaimable = () => {};
  }

  /** Claims tasks while this node has free slots; one claimer at a time, re-run if asked meanwhile. */
  #claimSoon(): void {
    if (this.#claiming) {
      this.#claimAgain = true;
      return;
    }
    if (this.#draining || this.#executors.size === 0) return;
    this.#claiming = true;
    void (async () => {
      try {
        do {
          this.#claimAgain = false;
          while (!this.#draining && this.#runs.size + this.#reserved < this.maxConcurrentRuns) {
            // The slot is the claim's while its query is in flight: a request starting a task
            // meanwhile queues instead of taking it, so a claim never lands on a full node.
            this.#reserved += 1;
            let record: TaskRecord | undefined;
            try {
              record = await this.store.claim(this.nodeId, [...this.#executors.keys()]);
            } finally {
              this.#reserved -= 1;
            }
            if (!record) break;
            this.#runClaimed(record);
          }
        } while (this.#claimAgain && !this.#draining);
      } catch (error) {
        this.#logger.error({ err: logSafe(error) }, 'claiming a task failed');
      } finally {
        this.#claiming = false;
      }
    })();
  }

  #runClaimed(record: TaskRecord): void {
    const executor = this.#executors.get(record.tool)!;
    this.#telemetry.claimed(labelsOf(record));
    const stored = fromStoredCapabilities(record.clientCapabilities);
    this.#launch(
      record,
      {
        owner: record.owner,
        tool: record.tool,
        scopes: record.scopes,
        args: record.args as never,
        execute: executor.execute,
        ...(stored.clientCapabilities === undefined ? {} : { clientCapabilities: stored.clientCapabilities }),
        ...(stored.carried === undefined ? {} : { carried: stored.carried }),
        resumable: record.resumable,
      },
      creatorContext(record) ?? otelContext.active(),
    );
  }

  /** The task as `tasks/get` shows it. Throws {@link TaskNotFoundError} for unknown, expired or foreign ids. */
  async get(ref: TaskRef): Promise<DetailedTask> {
    return toDetailedTask(await this.read(ref));
  }

  /** What a reader sees of the stored task. Throws {@link TaskNotFoundError} for unknown, expired or foreign ids. */
  async read(ref: TaskRef): Promise<TaskSnapshot> {
    const snapshot = await this.store.read(ref);
    if (!snapshot) throw new TaskNotFoundError();
    linkToCreator(snapshot);
    return snapshot;
  }

  /** The stored task. Throws {@link TaskNotFoundError} for unknown, expired or foreign ids. */
  async find(ref: TaskRef): Promise<TaskRecord> {
    const record = await this.store.get(ref);
    if (!record) throw new TaskNotFoundError();
    return record;
  }

  /**
   * Records answers (`tasks/update`); unknown and already answered keys are ignored.
   * `malformedKeys` are keys whose value the MCP layer could not take as an answer (not a bare
   * result object): ignored too unless the task waits on one, which refuses the whole update with
   * {@link MalformedInputResponseError} naming it, so nothing of it is stored.
   */
  async update(ref: TaskRef, responses: InputResponses, malformedKeys: readonly string[] = []): Promise<void> {
    if (malformedKeys.length > 0) {
      const outstanding = (await this.store.controlStates([ref])).get(ref.taskId)?.outstandingKeys ?? [];
      const refused = malformedKeys.find((key) => outstanding.includes(key));
      if (refused !== undefined) throw new MalformedInputResponseError(refused);
    }
    const answered = await this.store.answerInput(ref, responses);
    if (!answered) throw new TaskNotFoundError();
    linkToCreator(answered.task);
    if (answered.accepted.length === 0) return;
    this.#runs.get(ref.taskId)?.wake();
    // A parked task is claimable now: this node may have the room (the store announces it to the others).
    if (isClaimable(stateOf(answered.task))) this.#claimSoon();
    if (answered.task.status === 'working') this.#telemetry.status(labelsOf(answered.task), 'working');
  }

  /** Cancels a task (`tasks/cancel`); a finished one stays as it is. */
  async cancel(ref: TaskRef): Promise<void> {
    const task = await this.store.cancel(ref);
    if (!task) throw new TaskNotFoundError();
    linkToCreator(task);
    if (task.status !== 'cancelled') return;
    this.#telemetry.status(labelsOf(task), 'cancelled');
    this.#runs.get(ref.taskId)?.abort();
  }

  /**
   * Follows a task for `notifications/tasks`: `onChange` runs after each change of its status or
   * outstanding input, made on any node. Throws {@link TaskNotFoundError} for unknown, expired or
   * foreign ids.
   */
  async follow(ref: TaskRef, onChange: () => void): Promise<Unsubscribe> {
    const unsubscribe = await this.#events.follow(ref, onChange);
    if (!unsubscribe) throw new TaskNotFoundError();
    return unsubscribe;
  }

  /**
   * {@link follow} for many of one owner's tasks with one read of them all (a listen's ids):
   * resolves the visible ones with their records; unknown, expired and foreign ids are absent.
   */
  followMany(owner: TaskOwner, taskIds: readonly string[], onChange: (taskId: string) => void): Promise<FollowedTask[]> {
    return this.#events.followMany(owner, taskIds, onChange);
  }

  /**
   * Stops taking tasks, waits up to `deadlineMs` for the runs on this node to finish, then fails
   * the rest with a clear error and aborts them.
   */
  async drain(deadlineMs: number): Promise<void> {
    this.#draining = true;
    this.#stopClaiming();
    await this.#settledWithin(deadlineMs);
    const error: JsonRpcErrorObject = { code: ErrorCode.InternalError, message: 'The server shut down before the task finished' };
    await Promise.allSettled(
      [...this.#runs.values()].map(async (run) => {
        // A resumable task is handed over: another node claims it and its journal resumes it.
        const released = run.resumable ? await this.store.release(run.ref, run.claim).catch(() => undefined) : undefined;
        if (released) this.#telemetry.handedOver(run.labels);
        else await this.#finish(run, { status: 'failed', error, statusMessage: error.message });
        run.abort();
      }),
    );
    await this.#settledWithin(ABORT_GRACE_MS);
    this.#poller.stop();
    this.#detachRuns();
  }

  /**
   * Aborts every run without recording anything (their tasks stay as they are, for another node's
   * lease reaper to settle: released when resumable, failed otherwise) and stops polling. What the
   * aborted tools return or throw is not written. Waits briefly for runs to unwind; a tool that
   * ignores its signal is not waited for.
   */
  async close(): Promise<void> {
    this.#draining = true;
    this.#closed = true;
    this.#stopClaiming();
    // First: the tasks left as they are are the lease reaper's to settle, not the rescuer's.
    this.#detachRuns();
    this.#poller.stop();
    for (const run of this.#runs.values()) run.abort();
    await this.#settledWithin(ABORT_GRACE_MS);
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
        const result = await telemetry.within(() => request.execute(request.args, new RunContext(run, this.#contextHost, request.clientCapabilities), request.carried));
        outcome = { status: 'completed', result };
      } catch (error) {
        if (!run.aborted) outcome = this.#outcomeOfThrow(run, error, telemetry);
      }
      // An aborted run's end is never its task's outcome, however the tool left (returning what it
      // had, throwing its signal's reason): a cancel or an end elsewhere already settled the task,
      // a park left it for its answer, a drain settled it before aborting, and an abort of the
      // runtime's own (close, a lost lease, the database out for a whole lease) leaves it for the
      // lease, the rescuer or, when resumable, another node's run.
      const written = outcome && !run.aborted ? await this.#finish(run, outcome) : undefined;
      if (run.lost) await this.#handOverLost(run);
      await this.#reportEnd(run, telemetry, written);
    } finally {
      unwatch();
    }
  }

  /** A signal for the run: an answer wakes its waiters, a confirmed cancel aborts it, a hint is checked against the row first. */
  #signalled(run: ActiveRun, signal: TaskSignal): void {
    if (signal.kind !== 'cancelled') return run.wake();
    if (signal.confirmed) return this.#abort(run);
    if (run.aborted) return;
    // Made at the first hint: most runs never get one.
    run.hints ??= new CancelHintCheck(
      async () => {
        // Ended, or held by a later claim (this run was superseded): as the backstop poll judges it.
        const state = (await this.store.controlStates([run.ref])).get(run.ref.taskId);
        return !state || isTerminal(state.status) || !claimHolds(state, run.claim);
      },
      () => this.#abort(run),
      (error) => this.#onError(error, { ...run.ref, tool: run.tool }),
    );
    run.hints.hint();
  }

  /** Aborts a run on a cancel this node learnt of, measuring how long the news took. */
  #abort(run: ActiveRun): void {
    if (!run.aborted) void this.#measureCancelDelivery(run);
    run.abort();
  }

  /** Closes the run's telemetry with the status the store holds now. */
  async #reportEnd(run: ActiveRun, telemetry: RunTelemetry, written: TaskRecord | undefined): Promise<void> {
    let final = written;
    if (!final) {
      // No outcome, or it lost its compare-and-set (a cancel won, the task expired): say what stands.
      final = await this.store.get(run.ref).catch(() => undefined);
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
    const task = await this.store.get(run.ref).catch(() => undefined);
    if (task?.status === 'cancelled') this.#telemetry.cancelDelivered((noticedAt - task.lastUpdatedAt.getTime()) / 1000);
  }

  #outcomeOfThrow(run: ActiveRun, error: unknown, telemetry: RunTelemetry): TaskOutcome {
    const rpcError = this.#classify(error);
    telemetry.threw(error, rpcError);
    if (rpcError) return { status: 'failed', error: rpcError, statusMessage: `Tool execution failed: ${rpcError.message}` };
    if (isRuntimeFault(error)) {
      const ref = newErrorRef();
      this.#onError(error, { ...run.ref, tool: run.tool, ref });
      const internal = internalErrorWithRef(ref);
      return { status: 'failed', error: internal, statusMessage: internal.message };
    }
    // The tool's own error: a result, not a protocol fault (the spec keeps `failed` for JSON-RPC
    // errors), and the same result the inline path gives.
    return { status: 'completed', result: toolErrorResult(error) };
  }

  /**
   * Releases the task of a run that lost its journal, for another run (on any node, this one
   * included) to resume: retried while the store is out, for as long as the run could still hold
   * its task. A release that finds the claim gone (a cancel, another node's reaper) is done; a
   * node that closes leaves the task to the lease, as it leaves every run's.
   */
  async #handOverLost(run: ActiveRun): Promise<void> {
    for (let attempt = 0; !this.#closed; attempt += 1) {
      try {
        if (await this.store.release(run.ref, run.claim)) this.#telemetry.handedOver(run.labels);
        return;
      } catch (error) {
        if (error instanceof JsonRpcError || attempt >= HAND_OVER_RETRIES) return this.#onError(error, { ...run.ref, tool: run.tool });
        await new Promise((resolve) => setTimeout(resolve, FINISH_RETRY_DELAYS_MS[Math.min(attempt, FINISH_RETRY_DELAYS_MS.length - 1)]));
      }
    }
  }

  /** Writes the outcome, compare-and-set; retries store failures so a blip does not strand the task. */
  async #finish(run: ActiveRun, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    let replaced = false;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.store.finish(run.ref, outcome, run.claim);
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
          this.#onError(error, { ...run.ref, tool: run.tool });
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** What the runs' contexts call: made once, shared by every run. */
  readonly #contextHost: RunContextHost = {
    step: (run, name, fn) => this.#step(run, name, fn),
    journal: (run) =>
      this.store.steps(run.ref).catch((error: unknown) => {
        // As for a step: a resumable run that cannot read its journal is handed over.
        if (run.resumable) run.lose();
        return Promise.reject(markRuntimeFault(error));
      }),
    progress: (run, progress, total, message) => this.#progress(run, progress, total, message),
    ask: (run, capabilities, key, request) => {
      try {
        admitInputRequest(key, request, capabilities);
      } catch (error) {
        return Promise.reject(error);
      }
      return this.#awaitInput(run, key, request);
    },
  };

  /** Sets the status message (`ctx.progress`); no-op once the run was aborted. */
  async #progress(run: ActiveRun, progress: number, total: number | undefined, message: string | undefined): Promise<void> {
    if (run.aborted) return;
    const text = message ?? (total === undefined ? `${progress}` : `${progress}/${total}`);
    let updated: TaskRecord | undefined;
    try {
      updated = await this.store.setStatusMessage(run.ref, text, run.claim);
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

  /**
   * One journaled step: a finished one returns its journaled result; otherwise `fn` runs and its
   * result is journaled before it is returned. A run that no longer holds its task stops here.
   */
  async #step<T extends JsonValue | void>(run: ActiveRun, name: string, fn: () => T | Promise<T>): Promise<T> {
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
    if (run.aborted) throw new TaskCancelledError();
    const begin = await this.store.beginStep(run.ref, run.claim, name).catch(fault);
    if (begin.state === 'lost') return superseded();
    if (begin.state === 'done') return begin.result as T;
    const value = await fn();
    const journaled = await this.store.finishStep(run.ref, run.claim, name, value === undefined ? null : (value as JsonValue)).catch(fault);
    if (!journaled) return superseded();
    return value;
  }

  /**
   * Whether a run waiting for input gives its slot back: a resumable task whose tool this node can
   * run again when it is claimed (waiting is not running), unless the node is draining (the drain
   * hands it over).
   */
  #mayPark(run: ActiveRun): boolean {
    return run.resumable && this.#executors.has(run.tool) && !this.#draining;
  }

  /**
   * Parks the run's task while `key` is outstanding; `true` when it did, and the run is over. A
   * store that fails keeps the run waiting (the slot stays taken, nothing is lost).
   */
  async #park(run: ActiveRun, key: string): Promise<boolean> {
    let parked: boolean;
    try {
      parked = await this.store.park(run.ref, run.claim, key);
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
          ask = asked ? await this.store.readInput(run.ref, key) : await this.store.requestInput(run.ref, key, request, run.claim);
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
    }
  }
}

/**
 * Events for a store that delivers none and a runtime without a node: runs rely on the backstop
 * poll, and followers see a task's state when they start following and nothing after.
 */
function noEvents(store: TaskStore): TaskEvents {
  return {
    watch: () => () => {},
    follow: async (ref) => ((await store.markFollowed(ref)) ? () => {} : undefined),
    followMany: async (owner, taskIds) => (await store.markFollowedMany(owner, taskIds)).map((record) => ({ record, unfollow: () => {} })),
  };
}

/** The asked time to live, capped by the runtime's (`null`: unlimited). */
function ttlOf(asked: number | undefined, max: number | null): number | null {
  if (asked === undefined) return max;
  if (!(Number.isSafeInteger(asked) && asked > 0)) throw new RangeError('ttlMs must be a positive integer');
  return max === null ? asked : Math.min(asked, max);
}

/** Resolves at `wake` or after `ms`, whichever comes first. */
async function wakeOrDelay(wake: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([wake, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function labelsOf(task: TaskRecord): TaskLabels {
  return { taskId: task.taskId, tool: task.tool, server: task.owner.server, owner: task.owner };
}
