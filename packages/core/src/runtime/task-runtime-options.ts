import { randomUUID } from 'node:crypto';
import type { TaskEvents, TaskNode } from '../store/task-events.js';
import type { TaskStore } from '../store/task-store.js';
import { DEFAULT_MAX_ATTEMPTS } from '../task/task-record.js';
import { logSafe } from '../log/log-safe.js';
import { defaultLogger } from '../log/default-logger.js';
import type { Logger } from '../log/logger.js';
import type { TelemetryOptions } from '../telemetry/task-telemetry.js';
import { classifyOwnRpcError, type RpcErrorClassifier } from './rpc-error-of.js';
import type { TaskErrorContext } from './task-run-request.js';

/** Options of `TaskRuntime`; every field but `store` has the seed's default. */
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
  /**
   * Bytes one authenticated owner's tasks may keep until they expire, finished ones included: a
   * row's cost (1 KiB) plus its arguments and stored capabilities at creation, and a result or
   * error beyond 1 KiB at its finish (`Infinity`: no bound). Past it a create is refused like one
   * over `maxPerPrincipal` (an optional tool runs inline). Default 256 MiB.
   */
  readonly maxStoredBytesPerOwner?: number;
  /**
   * The same bound for the tasks of every caller without an authenticated subject together
   * (`TaskRunRequest.authenticated` false), database-wide: there is no owner to tell them
   * apart by, so it protects the database, high enough that ordinary use never meets it. Default 4 GiB.
   */
  readonly maxStoredBytesWithoutSubject?: number;
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
   * the tool registered (`TaskRuntime.registerTool`) on the nodes.
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
  /**
   * The runs in motion a contended node shares among its owners: while runs of more than one
   * owner are in motion here (not waiting for input), each owner's runs beyond
   * `max(1, floor(fairShareRuns / owners))` wait at their next context call (`ctx.step`,
   * `ctx.progress`, `ctx.journal`) until the owner is within its share again, first started first
   * served. An owner alone is never held back, nothing is refused and nothing is queued in the
   * store. Default: {@link maxConcurrentRuns} when it is set, else 16; `Infinity` turns it off.
   */
  readonly fairShareRuns?: number;
}

/** The options with their defaults, checked: what the runtime's parts are built from. */
export interface RuntimeSettings {
  readonly store: TaskStore;
  readonly node: TaskNode | undefined;
  readonly nodeId: string;
  readonly events: TaskEvents;
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  readonly maxPerPrincipal: number;
  readonly maxStoredBytesPerOwner: number;
  readonly maxStoredBytesWithoutSubject: number;
  readonly classify: RpcErrorClassifier;
  readonly onError: (error: unknown, task: TaskErrorContext) => void;
  readonly logger: Logger;
  readonly maxConcurrentRuns: number;
  readonly maxAttempts: number;
  readonly abortGraceMs: number;
  readonly fairShareRuns: number;
}

const DEFAULTS = {
  ttlMs: 3_600_000,
  pollIntervalMs: 1_000,
  maxPerPrincipal: 100,
  maxStoredBytesPerOwner: 256 * 1024 ** 2,
  maxStoredBytesWithoutSubject: 4 * 1024 ** 3,
  abortGraceMs: 5_000,
  fairShareRuns: 16,
} as const;

const isPositiveInteger = (value: number): boolean => Number.isSafeInteger(value) && value > 0;

/** Applies the defaults and refuses a bad option with a `RangeError` naming it. */
export function runtimeSettings(options: TaskRuntimeOptions): RuntimeSettings {
  const { node, store } = options;
  if (node && options.nodeId !== undefined && options.nodeId !== node.nodeId) {
    throw new RangeError(`nodeId ${JSON.stringify(options.nodeId)} differs from the node's id ${JSON.stringify(node.nodeId)}`);
  }
  const ttlMs = options.ttlMs === undefined ? DEFAULTS.ttlMs : options.ttlMs;
  if (ttlMs !== null && !isPositiveInteger(ttlMs)) throw new RangeError('ttlMs must be a positive integer or null');
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULTS.pollIntervalMs;
  if (!isPositiveInteger(pollIntervalMs)) throw new RangeError('pollIntervalMs must be a positive integer');
  const maxPerPrincipal = options.maxPerPrincipal ?? DEFAULTS.maxPerPrincipal;
  if (!(maxPerPrincipal === Infinity || isPositiveInteger(maxPerPrincipal))) throw new RangeError('maxPerPrincipal must be a positive integer or Infinity');
  const maxStoredBytesPerOwner = options.maxStoredBytesPerOwner ?? DEFAULTS.maxStoredBytesPerOwner;
  const maxStoredBytesWithoutSubject = options.maxStoredBytesWithoutSubject ?? DEFAULTS.maxStoredBytesWithoutSubject;
  for (const [name, value] of [['maxStoredBytesPerOwner', maxStoredBytesPerOwner], ['maxStoredBytesWithoutSubject', maxStoredBytesWithoutSubject]] as const) {
    if (!(value === Infinity || isPositiveInteger(value))) throw new RangeError(`${name} must be a positive integer or Infinity`);
  }
  const maxConcurrentRuns = options.maxConcurrentRuns ?? Infinity;
  if (!(maxConcurrentRuns === Infinity || isPositiveInteger(maxConcurrentRuns))) throw new RangeError('maxConcurrentRuns must be a positive integer or Infinity');
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!(isPositiveInteger(maxAttempts) && maxAttempts <= 1_000)) throw new RangeError('maxAttempts must be an integer from 1 to 1000');
  const abortGraceMs = options.abortGraceMs ?? DEFAULTS.abortGraceMs;
  if (!(Number.isSafeInteger(abortGraceMs) && abortGraceMs >= 0)) throw new RangeError('abortGraceMs must be a non-negative integer');
  const fairShareRuns = options.fairShareRuns ?? (Number.isFinite(maxConcurrentRuns) ? maxConcurrentRuns : DEFAULTS.fairShareRuns);
  if (!(fairShareRuns === Infinity || isPositiveInteger(fairShareRuns))) throw new RangeError('fairShareRuns must be a positive integer or Infinity');
  const classify = options.classifyError;
  const logger = options.logger ?? defaultLogger();
  return {
    store,
    node,
    nodeId: node?.nodeId ?? options.nodeId ?? randomUUID(),
    events: node ?? store.events ?? noEvents(store),
    ttlMs,
    pollIntervalMs,
    maxPerPrincipal,
    maxStoredBytesPerOwner,
    maxStoredBytesWithoutSubject,
    classify: classify ? (error) => classifyOwnRpcError(error) ?? classify(error) : classifyOwnRpcError,
    onError:
      options.onError ??
      ((error, task) => logger.error({ taskId: task.taskId, tool: task.tool, ...(task.ref === undefined ? {} : { ref: task.ref }), err: logSafe(error) }, 'task run fault')),
    logger,
    maxConcurrentRuns,
    maxAttempts,
    abortGraceMs,
    fairShareRuns,
  };
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
