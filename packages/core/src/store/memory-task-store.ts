import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { InputRequest, InputResponses } from '../input/input-request.js';
import { ownerKey, type TaskOwner } from '../task/task-owner.js';
import type { NewTask, TaskInput, TaskRecord } from '../task/task-record.js';
import { isTerminal } from '../task/task-status.js';
import { decideAnswer } from '../machine/decide-answer.js';
import { decideAsk } from '../machine/decide-ask.js';
import { decideCancel, decideRunWrite } from '../machine/decide-end.js';
import { decideRead } from '../machine/decide-read.js';
import { outstandingKeys, stateOf, type RunClaim } from '../machine/task-state.js';
import type { TaskEvents } from './task-events.js';
import { TaskFanOut } from './task-fan-out.js';
import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  TaskControlState,
  TaskOutcome,
  TaskRef,
  TaskSignal,
  TaskStore,
} from './task-store.js';
import {
  normaliseStatusMessage,
  validateInputKey,
  validateInputRequest,
  validateInputResponses,
  validateNewTask,
  validateOutcome,
  validateRef,
} from './validate-store-input.js';

/** Options of {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** The clock, for tests. Defaults to `Date.now`. */
  readonly now?: () => number;
  /** How often expired tasks are deleted (ms); they read as absent before that. Default 60 000. */
  readonly sweepIntervalMs?: number;
}

type MutableRecord = { -readonly [K in keyof TaskRecord]: TaskRecord[K] };

/**
 * The single-node store: tasks in a map, lost on restart. JavaScript runs one write at a time,
 * so each method's check-then-write is atomic without locks. Being one process, it delivers its
 * own {@link events}.
 */
export class MemoryTaskStore implements TaskStore {
  readonly events: TaskEvents;
  readonly #tasks = new Map<string, MutableRecord>();
  readonly #fanOut = new TaskFanOut((error, taskId) => console.error(`mcp-tasks: a listener of task ${taskId} threw:`, error));
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweep = setInterval(() => this.deleteExpired(), options.sweepIntervalMs ?? 60_000);
    this.#sweep.unref();
    this.events = {
      watch: (taskId, listener) => this.#fanOut.watch(taskId, listener),
      follow: async (ref, listener) => ((await this.markFollowed(ref)) ? this.#fanOut.follow(ref.taskId, listener) : undefined),
      followMany: (owner, taskIds, listener) => this.#fanOut.followMany(taskIds, listener, () => this.markFollowedMany(owner, taskIds)),
    };
  }

  async create(task: NewTask, options: CreateOptions): Promise<TaskRecord> {
    validateNewTask(task);
    const statusMessage = task.statusMessage == null ? null : normaliseStatusMessage(task.statusMessage);
    if (this.#tasks.has(task.taskId)) throw new InvalidTaskValueError('a task with this id already exists');
    const now = this.#now();
    if (Number.isFinite(options.maxLive) && this.#countLive(ownerKey(task.owner), now) >= options.maxLive) {
      throw new QuotaExceededError(options.maxLive);
    }
    const record: MutableRecord = {
      taskId: task.taskId,
      owner: { ...task.owner },
      tool: task.tool,
      scopes: [...task.scopes],
      status: 'working',
      statusMessage,
      createdAt: new Date(now),
      lastUpdatedAt: new Date(now),
      ttlMs: task.ttlMs,
      expiresAt: task.ttlMs === null ? null : new Date(now + task.ttlMs),
      pollIntervalMs: task.pollIntervalMs,
      inputs: {},
      result: null,
      error: null,
      nodeId: task.nodeId,
    };
    this.#tasks.set(task.taskId, record);
    return snapshot(record);
  }

  async get(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const record = this.#find(ref);
    return record && snapshot(record);
  }

  async setStatusMessage(ref: TaskRef, statusMessage: string, claim?: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const message = normaliseStatusMessage(statusMessage);
    const record = this.#findHeld(ref, claim);
    if (!record) return undefined;
    record.statusMessage = message;
    this.#touch(record);
    this.#changed(ref.taskId);
    return snapshot(record);
  }

  async requestInput(ref: TaskRef, key: string, request: InputRequest, claim?: RunClaim): Promise<InputAsk> {
    validateRef(ref);
    validateInputRequest(key, request);
    const record = this.#find(ref);
    if (!record) return { state: 'ended', status: null };
    const decision = decideAsk(stateOf(record), key);
    if (decision.kind === 'answered') return { state: 'answered', response: structuredClone(decision.response) };
    if (decision.kind === 'ended') return { state: 'ended', status: decision.status };
    if (decideRunWrite(stateOf(record), claim).kind === 'lost') return { state: 'ended', status: record.status };
    if (decision.newKey) record.inputs = { ...record.inputs, [key]: { request: structuredClone(request) } };
    record.status = 'input_required';
    this.#touch(record);
    if (decision.changed) this.#changed(ref.taskId);
    return { state: 'pending' };
  }

  async readInput(ref: TaskRef, key: string): Promise<InputAsk> {
    validateRef(ref);
    validateInputKey(key);
    const record = this.#find(ref);
    if (!record) return { state: 'ended', status: null };
    const read = decideRead(record, key);
    return read.state === 'answered' ? { state: 'answered', response: structuredClone(read.response) } : read;
  }

  async answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
    validateRef(ref);
    validateInputResponses(responses);
    const record = this.#find(ref);
    if (!record) return undefined;
    const decision = decideAnswer(stateOf(record), responses);
    if (decision.accepted.length === 0) return { accepted: [], task: snapshot(record) };
    const inputs: Record<string, TaskInput> = { ...record.inputs };
    for (const [key, input] of Object.entries(decision.answered)) inputs[key] = structuredClone(input);
    record.inputs = inputs;
    record.status = decision.status;
    this.#touch(record);
    this.#signal(ref.taskId, { kind: 'input' });
    this.#changed(ref.taskId);
    return { accepted: decision.accepted, task: snapshot(record) };
  }

  async cancel(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const record = this.#find(ref);
    if (!record) return undefined;
    if (decideCancel(record).kind === 'unchanged') return snapshot(record);
    record.status = 'cancelled';
    this.#touch(record);
    this.#signal(ref.taskId, { kind: 'cancelled', confirmed: true });
    this.#changed(ref.taskId);
    return snapshot(record);
  }

  async finish(ref: TaskRef, outcome: TaskOutcome, claim?: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateOutcome(outcome);
    const record = this.#findHeld(ref, claim);
    if (!record) return undefined;
    record.status = outcome.status;
    if (outcome.status === 'completed') {
      record.result = structuredClone(outcome.result);
    } else {
      record.error = structuredClone(outcome.error);
      record.statusMessage = normaliseStatusMessage(outcome.statusMessage);
    }
    this.#touch(record);
    this.#changed(ref.taskId);
    return snapshot(record);
  }

  async controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>> {
    const states = new Map<string, TaskControlState>();
    for (const ref of refs) {
      validateRef(ref);
      const record = this.#find(ref);
      if (!record) continue;
      states.set(ref.taskId, { status: record.status, outstandingKeys: outstandingKeys(record) });
    }
    return states;
  }

  async markFollowed(ref: TaskRef): Promise<boolean> {
    validateRef(ref);
    return this.#find(ref) !== undefined;
  }

  async markFollowedMany(owner: TaskOwner, taskIds: readonly string[]): Promise<TaskRecord[]> {
    const records: TaskRecord[] = [];
    for (const taskId of new Set(taskIds)) {
      validateRef({ taskId, owner });
      const record = this.#find({ taskId, owner });
      if (record) records.push(snapshot(record));
    }
    return records;
  }

  /** Deletes expired tasks now; returns how many. */
  deleteExpired(): number {
    const now = this.#now();
    let deleted = 0;
    for (const [taskId, record] of this.#tasks) {
      if (record.expiresAt !== null && record.expiresAt.getTime() <= now) {
        this.#tasks.delete(taskId);
        deleted += 1;
      }
    }
    return deleted;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#fanOut.clear();
  }

  #find(ref: TaskRef): MutableRecord | undefined {
    const record = this.#tasks.get(ref.taskId);
    if (!record || ownerKey(record.owner) !== ownerKey(ref.owner)) return undefined;
    if (record.expiresAt !== null && record.expiresAt.getTime() <= this.#now()) return undefined;
    return record;
  }

  /** The task, if a run holding `claim` may still write it. */
  #findHeld(ref: TaskRef, claim: RunClaim | undefined): MutableRecord | undefined {
    const record = this.#find(ref);
    return record && decideRunWrite(stateOf(record), claim).kind === 'write' ? record : undefined;
  }

  #countLive(key: string, now: number): number {
    let live = 0;
    for (const record of this.#tasks.values()) {
      if (isTerminal(record.status)) continue;
      if (record.expiresAt !== null && record.expiresAt.getTime() <= now) continue;
      if (ownerKey(record.owner) === key) live += 1;
    }
    return live;
  }

  #touch(record: MutableRecord): void {
    // Never move lastUpdatedAt backwards, even if the clock does.
    const now = Math.max(this.#now(), record.lastUpdatedAt.getTime());
    record.lastUpdatedAt = new Date(now);
  }

  #signal(taskId: string, signal: TaskSignal): void {
    // Deliver asynchronously, as a database notification would arrive.
    queueMicrotask(() => this.#fanOut.signal(taskId, signal));
  }

  #changed(taskId: string): void {
    queueMicrotask(() => this.#fanOut.changed(taskId));
  }
}

function snapshot(record: MutableRecord): TaskRecord {
  return structuredClone(record);
}
