import { context as otelContext } from '@opentelemetry/api';
import { MalformedInputResponseError } from '../errors/malformed-input-response-error.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { TaskNotFoundError } from '../errors/task-not-found-error.js';
import type { InputResponses } from '../input/input-request.js';
import type { JsonValue } from '../json/json-value.js';
import { isClaimable } from '../machine/decide-park.js';
import { stateOf } from '../machine/task-state.js';
import type { FollowedTask, TaskEvents } from '../store/task-events.js';
import type { TaskRef, TaskStore, Unsubscribe } from '../store/task-store.js';
import { toDetailedTask, type DetailedTask } from '../task/detailed-task.js';
import { newTaskId } from '../task/task-id.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { TaskRecord, TaskSnapshot } from '../task/task-record.js';
import { TaskTelemetry } from '../telemetry/task-telemetry.js';
import { linkToCreator, traceparentOf } from '../telemetry/task-trace-context.js';
import type { StoredBytesBound } from '../store/stored-bytes.js';
import { RunHost } from './run-host.js';
import { RunSlots } from './run-slots.js';
import { RuntimeDrainingError } from './runtime-draining-error.js';
import { toStoredCapabilities } from './stored-capabilities.js';
import { TaskClaimer } from './task-claimer.js';
import { labelsOf } from './task-labels.js';
import type { TaskExecutor, TaskRunRequest } from './task-run-request.js';
import { runtimeSettings, type TaskRuntimeOptions } from './task-runtime-options.js';

export type { TaskErrorContext, TaskExecute, TaskExecutor, TaskRunRequest } from './task-run-request.js';
export type { TaskRuntimeOptions } from './task-runtime-options.js';

/** The status message of a task waiting for a free run slot. */
export const QUEUED_STATUS_MESSAGE = 'Queued: waiting for a free run slot';

/** Claims in a row a start waits out for a slot before it queues its task (each a round trip). */
const MOST_CLAIM_WAITS = 3;

/**
 * Runs tools as tasks: commits the task, runs the tool in the background, records how it ended,
 * and carries cancels and input answers to the run wherever they were received.
 *
 * A facade over three parts: the {@link RunHost} (the runs this node executes), the
 * {@link TaskClaimer} (claimable tasks taken while there is room) and the {@link RunSlots} they
 * share; what is left here is the client's side: start, read, answer, cancel, follow, drain.
 */
export class TaskRuntime {
  readonly store: TaskStore;
  readonly nodeId: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  readonly maxPerPrincipal: number;
  readonly maxStoredBytesPerOwner: number;
  readonly maxStoredBytesWithoutSubject: number;
  readonly maxConcurrentRuns: number;
  readonly maxAttempts: number;
  readonly abortGraceMs: number;
  readonly #events: TaskEvents;
  readonly #telemetry: TaskTelemetry;
  readonly #host: RunHost;
  readonly #slots: RunSlots;
  readonly #claimer: TaskClaimer;
  #draining = false;

  constructor(options: TaskRuntimeOptions) {
    const settings = runtimeSettings(options);
    const { store, nodeId, logger } = settings;
    this.store = store;
    this.nodeId = nodeId;
    this.#events = settings.events;
    this.ttlMs = settings.ttlMs;
    this.pollIntervalMs = settings.pollIntervalMs;
    this.maxPerPrincipal = settings.maxPerPrincipal;
    this.maxStoredBytesPerOwner = settings.maxStoredBytesPerOwner;
    this.maxStoredBytesWithoutSubject = settings.maxStoredBytesWithoutSubject;
    this.maxConcurrentRuns = settings.maxConcurrentRuns;
    this.maxAttempts = settings.maxAttempts;
    this.abortGraceMs = settings.abortGraceMs;
    this.#telemetry = new TaskTelemetry(nodeId, options.telemetry, logger);
    this.#host = new RunHost({
      ...settings,
      telemetry: this.#telemetry,
      mayPark: (run) => run.resumable && this.#claimer.runs(run.tool) && !this.#draining,
      // A freed slot may take a queued task; without a limit nothing waits for one, and the
      // hot path pays no claim query per finished run.
      onSlotFreed: () => {
        if (this.#slots.bounded) this.#claimer.soon();
      },
    });
    this.#slots = new RunSlots(settings.maxConcurrentRuns, () => this.#host.size);
    this.#claimer = new TaskClaimer({
      ...settings,
      slots: this.#slots,
      telemetry: this.#telemetry,
      launch: (record, request, parent) => this.#host.launch(record, request, parent),
    });
  }

  /** The backstop poll: polls made so far, and the gap it waits now (longer while signals are proven). */
  get backstop(): { readonly polls: number; readonly gapMs: number } {
    return this.#host.backstop;
  }

  /** The fair share of this node's runs: runs of one owner in motion now (`Infinity` while one owner alone is), and the runs held back. */
  get fairShare(): { readonly share: number; readonly heldBack: number } {
    return this.#host.fairShare;
  }

  /** Runs on this node now. */
  get running(): number {
    return this.#host.size;
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
    // A claim's query in flight holds the slot this start would take: wait for its answer (a round
    // trip) rather than queue the task behind a claim that most often finds nothing; a few claims
    // in a row at most, then queue.
    for (let waits = 0; waits < MOST_CLAIM_WAITS && this.#slots.fullOfClaims; waits += 1) await this.#slots.claimSettled();
    if (this.#draining) throw new RuntimeDrainingError();
    // Beyond capacity the task is queued for whichever node has a slot first (this one included),
    // which needs its tool registered there; the reservation counts until the run registers.
    const queued = this.#slots.full;
    if (queued && !this.#claimer.runs(request.tool)) {
      throw new RangeError(`tool ${request.tool} must be registered (registerTool) to be queued beyond maxConcurrentRuns`);
    }
    if (!queued) this.#slots.reserve();
    const ttlMs = ttlOf(request.ttlMs, this.ttlMs);
    let record: TaskRecord;
    try {
      record = await this.store.create(
        {
          taskId: newTaskId(ttlMs === null ? null : Date.now() + ttlMs),
          owner: request.owner,
          tool: request.tool,
          scopes: request.scopes ?? [],
          ttlMs,
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
        { maxLive: this.maxPerPrincipal, ...this.#storageBound(request.authenticated ?? true) },
      );
    } catch (error) {
      if (error instanceof QuotaExceededError) this.#telemetry.quotaRefused(request.tool, request.owner.server);
      throw error;
    } finally {
      if (!queued) this.#slots.unreserve();
    }
    this.#telemetry.created(labelsOf(record));
    if (queued) {
      this.#claimer.soon();
      return record;
    }
    this.#host.launch(record, request, parent);
    return record;
  }

  /** The stored-bytes bound of a new task's pool, when it has one. */
  #storageBound(authenticated: boolean): { storage?: StoredBytesBound } {
    const maxBytes = authenticated ? this.maxStoredBytesPerOwner : this.maxStoredBytesWithoutSubject;
    return Number.isFinite(maxBytes) ? { storage: { pool: authenticated ? 'owner' : 'shared', maxBytes } } : {};
  }

  /**
   * Registers how this node runs `name`'s tasks that it claims (queued beyond a node's capacity,
   * or released by a node that was lost or drained), and starts claiming them.
   */
  registerTool(name: string, executor: TaskExecutor): void {
    this.#claimer.register(name, executor);
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
    this.#host.run(ref.taskId)?.wake();
    // A parked task is claimable now: this node may have the room (the store announces it to the others).
    if (isClaimable(stateOf(answered.task))) this.#claimer.soon();
    if (answered.task.status === 'working') this.#telemetry.status(labelsOf(answered.task), 'working');
  }

  /** Cancels a task (`tasks/cancel`); a finished one stays as it is. */
  async cancel(ref: TaskRef): Promise<void> {
    const task = await this.store.cancel(ref);
    if (!task) throw new TaskNotFoundError();
    linkToCreator(task);
    if (task.status !== 'cancelled') return;
    this.#telemetry.status(labelsOf(task), 'cancelled');
    this.#host.run(ref.taskId)?.abort();
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
   * the rest with a clear error and aborts them (a resumable task is handed over instead).
   */
  async drain(deadlineMs: number): Promise<void> {
    this.#draining = true;
    this.#claimer.stop();
    await this.#host.drain(deadlineMs);
  }

  /**
   * Aborts every run without recording anything (their tasks stay as they are, for another node's
   * lease reaper to settle: released when resumable, failed otherwise) and stops polling. What the
   * aborted tools return or throw is not written. Waits briefly for runs to unwind; a tool that
   * ignores its signal is not waited for.
   */
  async close(): Promise<void> {
    this.#draining = true;
    this.#claimer.stop();
    await this.#host.close();
  }
}

/** The asked time to live, capped by the runtime's (`null`: unlimited). */
function ttlOf(asked: number | undefined, max: number | null): number | null {
  if (asked === undefined) return max;
  if (!(Number.isSafeInteger(asked) && asked > 0)) throw new RangeError('ttlMs must be a positive integer');
  return max === null ? asked : Math.min(asked, max);
}
