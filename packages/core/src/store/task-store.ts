import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputRequest, InputResponse, InputResponses } from '../input/input-request.js';
import type { JsonObject } from '../json/json-value.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { NewTask, TaskRecord } from '../task/task-record.js';
import type { TaskStatus } from '../task/task-status.js';

/** Names one task of one owner. Every store operation takes one: there is no read by id alone. */
export interface TaskRef {
  readonly taskId: string;
  readonly owner: TaskOwner;
}

/** How a task ends when its run returns or throws. */
export type TaskOutcome =
  | { readonly status: 'completed'; readonly result: JsonObject }
  | { readonly status: 'failed'; readonly error: JsonRpcErrorObject; readonly statusMessage: string };

/** What asking for input found. */
export type InputAsk =
  /** The key was answered before (or just now): the first answer. */
  | { readonly state: 'answered'; readonly response: InputResponse }
  /** The key is outstanding and the task is `input_required`. */
  | { readonly state: 'pending' }
  /** The task is terminal, expired or gone; the wait is over. */
  | { readonly state: 'ended'; readonly status: TaskStatus | null };

/** What `answerInput` did. */
export interface InputAnswerResult {
  /** The keys whose answers were recorded now (outstanding keys only). */
  readonly accepted: readonly string[];
  /** The task after the write. */
  readonly task: TaskRecord;
}

/** A control event for a task, delivered to the node that runs it. */
export type TaskSignal = { readonly kind: 'cancelled' } | { readonly kind: 'input' };

/** The state a runtime needs to notice cancels and answers it was not told about. */
export interface TaskControlState {
  readonly status: TaskStatus;
  /** Keys asked and still without an answer. */
  readonly outstandingKeys: readonly string[];
}

/** Options of `create`. */
export interface CreateOptions {
  /** The owner's live-task limit (`Infinity` for none); checked atomically with the insert. */
  readonly maxLive: number;
}

/** Removes a subscription. */
export type Unsubscribe = () => void;

/** The runs a node's runtime holds right now, as a store's rescuer asks about them. */
export interface RunRegistry {
  /** Whether a run on this node holds the task (it will write its outcome). */
  holds(taskId: string): boolean;
}

/**
 * Where tasks live. Every write is a compare-and-set on the current status: nothing changes a
 * terminal task, and a write that lost a race reports it instead of overwriting. Expired tasks
 * read as absent in every operation, before any sweep deletes them. A task of another owner is
 * indistinguishable from an unknown one. Bad input (malformed owner, non-JSON or oversized values,
 * unknown status) is refused with a typed error and changes nothing.
 */
export interface TaskStore {
  /**
   * The node this store holds a lease for, if it keeps node leases (`PostgresTaskStore` with a
   * `nodeId`). The runtime then records this id on the tasks it runs, so that when the lease
   * expires the store's reaper can fail them; a runtime given a different `nodeId` is refused.
   */
  readonly nodeId?: string | undefined;

  /**
   * Creates a task in `working`, durably: once this resolves, `get` finds it on every node.
   * Throws {@link QuotaExceededError} when the owner already has `maxLive` live tasks; the check
   * and the insert are atomic under concurrency.
   */
  create(task: NewTask, options: CreateOptions): Promise<TaskRecord>;

  /** The task, or `undefined` when it is unknown, expired or another owner's. */
  get(ref: TaskRef): Promise<TaskRecord | undefined>;

  /** Sets the status message of a live task; `undefined` when it is no longer live. */
  setStatusMessage(ref: TaskRef, statusMessage: string): Promise<TaskRecord | undefined>;

  /**
   * Asks for input under `key`. A key answered before returns its first answer and changes
   * nothing; a new key is recorded and moves the task to `input_required`.
   */
  requestInput(ref: TaskRef, key: string, request: InputRequest): Promise<InputAsk>;

  /** Reads where input `key` stands without asking again. */
  readInput(ref: TaskRef, key: string): Promise<InputAsk>;

  /**
   * Records the first answer of each outstanding key in `responses`, ignoring unknown and
   * already answered keys; when no key remains outstanding the task goes back to `working`.
   * Signals the running node when anything was accepted. `undefined` when the task is not found.
   */
  answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined>;

  /**
   * Marks a live task `cancelled` and signals the node that runs it. A terminal task is returned
   * unchanged. `undefined` when the task is not found.
   */
  cancel(ref: TaskRef): Promise<TaskRecord | undefined>;

  /** Ends a live task with its outcome; `undefined` when it was already terminal or gone. */
  finish(ref: TaskRef, outcome: TaskOutcome): Promise<TaskRecord | undefined>;

  /** Control states of the given tasks (absent from the map: gone or expired). The runtime's backstop poll. */
  controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>>;

  /**
   * Delivers cancels and answers for `taskId` written through any store instance on the same
   * backing storage (for PostgreSQL: any node). Delivery is best effort; the runtime's poll of
   * {@link controlStates} is the backstop.
   */
  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe;

  /**
   * Calls `listener` after every change of the task's status, status message (progress) or
   * outstanding input, written
   * through any store instance on the same backing storage (for PostgreSQL: any node), so a
   * follower can re-read and forward it. Resolves once following is in place: a read made after
   * it cannot miss a later change. Calls may be coalesced or repeated; followers re-read and
   * compare. Resolves `undefined` when the task is not found.
   */
  follow(ref: TaskRef, listener: () => void): Promise<Unsubscribe | undefined>;

  /**
   * Tells the store which tasks the runtime on this node runs, for stores that rescue tasks no
   * run holds (`PostgresTaskStore` with a `nodeId` fails its own node's live tasks that no
   * registry holds, so a finish that could not be written never leaves a task live for its TTL).
   * The runtime attaches at construction and detaches on `close` and after `drain`.
   */
  attachRuns?(runs: RunRegistry): Unsubscribe;

  /** Releases connections and timers. */
  close(): Promise<void>;
}
