import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputRequest, InputResponse, InputResponses } from '../input/input-request.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { NewTask, TaskRecord, TaskSnapshot } from '../task/task-record.js';
import type { TaskStatus } from '../task/task-status.js';
import type { RunClaim } from '../machine/task-state.js';
import type { StoredBytesExceededError } from '../errors/stored-bytes-exceeded-error.js';
import type { StoredBytesBound } from './stored-bytes.js';
import type { TaskEvents } from './task-events.js';
import type { ListTasksOptions, TaskPage } from './task-page.js';
import type { UpstreamCancelLedger } from './upstream-cancel-ledger.js';

/** {@link TaskStore.countLive}: live tasks of some tools in the whole store, and an owner's share of them. */
export interface LiveTaskCount {
  readonly total: number;
  readonly owner: number;
}

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

/**
 * A control event for a task, delivered to the node that runs it. A cancel is a hint the runtime
 * confirms against the row before it aborts the run (a notification can be forged by any
 * database connection), unless `confirmed`: its sender read or wrote the row and knows the task
 * ended (a rescan, a node that lost its lease and failed its own tasks, an in-process store).
 */
export type TaskSignal = { readonly kind: 'cancelled'; readonly confirmed?: boolean } | { readonly kind: 'input' };

/** The state a runtime needs to notice cancels and answers it was not told about. */
export interface TaskControlState {
  readonly status: TaskStatus;
  /** Who holds the task now; a run whose claim differs was superseded. */
  readonly claim: RunClaim | null;
  /** Keys asked and still without an answer. */
  readonly outstandingKeys: readonly string[];
}

/** Options of `create`. */
export interface CreateOptions {
  /** The owner's live-task limit (`Infinity` for none); checked atomically with the insert. */
  readonly maxLive: number;
  /**
   * The bound on what the task's pool keeps until its tasks expire (its row, arguments and
   * capabilities now, a large result or error at its finish), checked atomically with the insert
   * for an owner's pool; absent: nothing is charged. Past it the create throws
   * {@link StoredBytesExceededError}.
   */
  readonly storage?: StoredBytesBound;
}

/** What starting a journaled step found. */
export type StepBegin =
  /** The step finished in an earlier run: its journaled result, and `fn` is not called again. */
  | { readonly state: 'done'; readonly result: JsonValue }
  /** The step's work starts now (`starts` counts this start too). */
  | { readonly state: 'run'; readonly starts: number }
  /** The claim no longer holds the task: the run is superseded and must stop. */
  | { readonly state: 'lost' };

/** One journaled step of a task. */
export interface TaskStep {
  readonly name: string;
  /** How many times its work started, over every run of the task. */
  readonly starts: number;
  /** Whether it finished (its result is journaled). */
  readonly done: boolean;
  /** The journaled result of a finished step, when asked for (`steps(ref, { results: true })`). */
  readonly result?: JsonValue;
}

/** Options of `steps`. */
export interface StepsOptions {
  /** Include each finished step's journaled result. Default false. */
  readonly results?: boolean;
}

/** Removes a subscription. */
export type Unsubscribe = () => void;

/**
 * Where tasks live. Every write is a compare-and-set on the current status: nothing changes a
 * terminal task, and a write that lost a race reports it instead of overwriting. Expired tasks
 * read as absent in every operation, before any sweep deletes them. A task of another owner is
 * indistinguishable from an unknown one. Bad input (malformed owner, non-JSON or oversized values,
 * unknown status) is refused with a typed error and changes nothing.
 */
export interface TaskStore {
  /**
   * The events of this store's own writes, when it can deliver them itself (`MemoryTaskStore`: one
   * process). A shared store has none: a node object beside it (`PostgresTaskNode`) delivers them.
   */
  readonly events?: TaskEvents | undefined;

  /**
   * Where a gateway keeps the cancels it owes its upstreams, when the store can share them
   * between nodes (`PostgresTaskStore`); without it a gateway keeps them in its own process.
   */
  readonly upstreamCancels?: UpstreamCancelLedger | undefined;

  /**
   * The live tasks of `tools` in the whole store, and how many of them are `owner`'s: what a
   * gateway holds of one upstream's capacity, and what one caller holds of it. Optional: without
   * it a gateway cannot share an upstream's capacity between callers.
   */
  countLive?(tools: readonly string[], owner: TaskOwner): Promise<LiveTaskCount>;

  /**
   * Creates a task in `working`, durably: once this resolves, `get` finds it on every node.
   * Throws {@link QuotaExceededError} when the owner already has `maxLive` live tasks; the check
   * and the insert are atomic under concurrency.
   */
  create(task: NewTask, options: CreateOptions): Promise<TaskRecord>;

  /** The task, or `undefined` when it is unknown, expired or another owner's. */
  get(ref: TaskRef): Promise<TaskRecord | undefined>;

  /**
   * What a reader sees of the task ({@link TaskSnapshot}): found exactly when `get` finds it,
   * with the same values. The read of every `tasks/get`, so a store reads no more than that.
   */
  read(ref: TaskRef): Promise<TaskSnapshot | undefined>;

  /**
   * One page of `owner`'s tasks, newest first (ties broken by id); expired tasks are absent.
   * `nextCursor` is present when more follow. A cursor the store did not hand out is refused
   * with `InvalidCursorError` (-32602). Exactly the tasks `get` finds for that owner.
   */
  list(owner: TaskOwner, options?: ListTasksOptions): Promise<TaskPage>;

  /**
   * Sets the status message of a live task; followers hear of it. `undefined` when it is no
   * longer live, or `claim` no longer holds it.
   */
  setStatusMessage(ref: TaskRef, statusMessage: string, claim?: RunClaim): Promise<TaskRecord | undefined>;

  /**
   * Asks for input under `key`. A key answered before returns its first answer and changes
   * nothing; a new key is recorded and moves the task to `input_required`. A `claim` that no
   * longer holds the task asks nothing (`ended`).
   */
  requestInput(ref: TaskRef, key: string, request: InputRequest, claim?: RunClaim): Promise<InputAsk>;

  /** Reads where input `key` stands without asking again. */
  readInput(ref: TaskRef, key: string): Promise<InputAsk>;

  /**
   * Records the first answer of each outstanding key in `responses`, ignoring unknown and
   * already answered keys; when no key remains outstanding the task goes back to `working`.
   * Signals the running node when anything was accepted, and announces a parked task that became
   * claimable. `undefined` when the task is not found.
   */
  answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined>;

  /**
   * Marks a live task `cancelled` and signals the node that runs it. A terminal task is returned
   * unchanged. `undefined` when the task is not found.
   */
  cancel(ref: TaskRef): Promise<TaskRecord | undefined>;

  /** Ends a live task with its outcome; `undefined` when it was already terminal, gone, or `claim` no longer holds it. */
  finish(ref: TaskRef, outcome: TaskOutcome, claim?: RunClaim): Promise<TaskRecord | undefined>;

  /** Control states of the given tasks (absent from the map: gone or expired). The runtime's backstop poll. */
  controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>>;

  /**
   * Marks the task as followed, so that its changes are announced to the nodes (a shared store
   * announces only followed tasks, keeping unfollowed writes off the notification path). `false`
   * when the task is not found. Subscribing is {@link TaskEvents.follow}'s business.
   */
  markFollowed(ref: TaskRef): Promise<boolean>;

  /**
   * {@link markFollowed} for many of one owner's tasks in one round trip (a listen's ids): returns
   * the records of the visible ones; unknown, foreign and expired ids are absent.
   */
  markFollowedMany(owner: TaskOwner, taskIds: readonly string[]): Promise<TaskRecord[]>;

  /**
   * Claims one claimable task for a run on `nodeId`: `working`, unexpired, held by no run (a task
   * waiting for input with no run is claimable only once answered), of a tool in
   * `tools`; among the owners with such tasks, one with the fewest held tasks goes first (one
   * owner's backlog does not starve another's), and its oldest task. The claim increments the
   * task's attempt, fencing off any earlier run. Two nodes never claim the same task. `undefined`
   * when nothing is claimable.
   */
  claim(nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined>;

  /**
   * Hands a live task that `claim` holds back for any node to claim (a draining node): no run
   * holds it, and the hand-over does not count against its `maxAttempts`. `undefined` when the
   * claim no longer holds it.
   */
  release(ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined>;

  /**
   * Gives back the task `claim` holds while its run waits on input `key` (a resumable task): no
   * run holds it and it stays `input_required`; once no key is outstanding it is claimable again
   * (announced to the nodes), and the next claim's run replays its steps and answers. Like a
   * hand-over, a park does not count against `maxAttempts`. `false`, changing nothing, when the
   * claim no longer holds the task, it ended, or `key` was answered meanwhile (the run goes on).
   */
  park(ref: TaskRef, claim: RunClaim, key: string): Promise<boolean>;

  /**
   * Starts step `name` of the task `claim` holds: a step finished before returns its journaled
   * result; otherwise its start is counted and the run does the work.
   */
  beginStep(ref: TaskRef, claim: RunClaim, name: string): Promise<StepBegin>;

  /** Journals the result of a step the run began; `false` when the claim no longer holds the task. */
  finishStep(ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean>;

  /**
   * The task's journal, in the order steps first started (empty when not found); with
   * `results`, each finished step also carries its journaled result.
   */
  steps(ref: TaskRef, options?: StepsOptions): Promise<readonly TaskStep[]>;

  /** Releases connections and timers. */
  close(): Promise<void>;
}
