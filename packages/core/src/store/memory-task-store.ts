import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { InputRequest, InputResponses } from '../input/input-request.js';
import { ownerKey } from '../task/task-owner.js';
import type { NewTask, TaskInput, TaskRecord } from '../task/task-record.js';
import { isTerminal } from '../task/task-status.js';
import { TASK_LIMITS } from './task-limits.js';
import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  TaskControlState,
  TaskOutcome,
  TaskRef,
  TaskSignal,
  TaskStore,
  Unsubscribe,
} from './task-store.js';
import {
  normaliseStatusMessage,
  validateInputKey,
  validateInputRequest,
  validateInputResponse,
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
 * so each method's check-then-write is atomic without locks.
 */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, MutableRecord>();
  readonly #watchers = new Map<string, Set<(signal: TaskSignal) => void>>();
  readonly #followers = new Map<string, Set<() => void>>();
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweep = setInterval(() => this.deleteExpired(), options.sweepIntervalMs ?? 60_000);
    this.#sweep.unref();
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

  async setStatusMessage(ref: TaskRef, statusMessage: string): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const message = normaliseStatusMessage(statusMessage);
    const record = this.#findLive(ref);
    if (!record) return undefined;
    record.statusMessage = message;
    this.#touch(record);
    this.#changed(ref.taskId);
    return snapshot(record);
  }

  async requestInput(ref: TaskRef, key: string, request: InputRequest): Promise<InputAsk> {
    validateRef(ref);
    validateInputRequest(key, request);
    const record = this.#find(ref);
    if (!record) return { state: 'ended', status: null };
    const existing = record.inputs[key];
    if (existing?.response !== undefined) return { state: 'answered', response: structuredClone(existing.response) };
    if (isTerminal(record.status)) return { state: 'ended', status: record.status };
    if (!existing) {
      if (Object.keys(record.inputs).length >= TASK_LIMITS.maxInputKeys) {
        throw new InvalidTaskValueError(`a task may ask at most ${TASK_LIMITS.maxInputKeys} input keys`);
      }
      record.inputs = { ...record.inputs, [key]: { request: structuredClone(request) } };
    }
    const changed = !existing || record.status !== 'input_required';
    record.status = 'input_required';
    this.#touch(record);
    if (changed) this.#changed(ref.taskId);
    return { state: 'pending' };
  }

  async readInput(ref: TaskRef, key: string): Promise<InputAsk> {
    validateRef(ref);
    validateInputKey(key);
    const record = this.#find(ref);
    if (!record) return { state: 'ended', status: null };
    const input = record.inputs[key];
    if (input?.response !== undefined) return { state: 'answered', response: structuredClone(input.response) };
    if (isTerminal(record.status)) return { state: 'ended', status: record.status };
    return { state: 'pending' };
  }

  async answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
    validateRef(ref);
    validateInputResponses(responses);
    const record = this.#find(ref);
    if (!record) return undefined;
    if (isTerminal(record.status)) return { accepted: [], task: snapshot(record) };
    const accepted = Object.keys(responses).filter((key) => {
      const input = record.inputs[key];
      return input !== undefined && input.response === undefined;
    });
    // Validate every accepted answer before writing any, so a bad one loses nothing.
    for (const key of accepted) validateInputResponse(key, record.inputs[key]!.request, responses[key]!);
    if (accepted.length === 0) return { accepted, task: snapshot(record) };
    const inputs: Record<string, TaskInput> = { ...record.inputs };
    for (const key of accepted) inputs[key] = { request: inputs[key]!.request, response: structuredClone(responses[key]!) };
    record.inputs = inputs;
    if (Object.values(inputs).every((input) => input.response !== undefined)) record.status = 'working';
    this.#touch(record);
    this.#signal(ref.taskId, { kind: 'input' });
    this.#changed(ref.taskId);
    return { accepted, task: snapshot(record) };
  }

  async cancel(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const record = this.#find(ref);
    if (!record) return undefined;
    if (isTerminal(record.status)) return snapshot(record);
    record.status = 'cancelled';
    this.#touch(record);
    this.#signal(ref.taskId, { kind: 'cancelled' });
    this.#changed(ref.taskId);
    return snapshot(record);
  }

  async finish(ref: TaskRef, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateOutcome(outcome);
    const record = this.#findLive(ref);
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
      const outstandingKeys = Object.keys(record.inputs).filter((key) => record.inputs[key]!.response === undefined);
      states.set(ref.taskId, { status: record.status, outstandingKeys });
    }
    return states;
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe {
    return subscribe(this.#watchers, taskId, listener);
  }

  async follow(ref: TaskRef, listener: () => void): Promise<Unsubscribe | undefined> {
    validateRef(ref);
    if (!this.#find(ref)) return undefined;
    return subscribe(this.#followers, ref.taskId, listener);
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
    this.#watchers.clear();
    this.#followers.clear();
  }

  #find(ref: TaskRef): MutableRecord | undefined {
    const record = this.#tasks.get(ref.taskId);
    if (!record || ownerKey(record.owner) !== ownerKey(ref.owner)) return undefined;
    if (record.expiresAt !== null && record.expiresAt.getTime() <= this.#now()) return undefined;
    return record;
  }

  #findLive(ref: TaskRef): MutableRecord | undefined {
    const record = this.#find(ref);
    return record && !isTerminal(record.status) ? record : undefined;
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
    const listeners = this.#watchers.get(taskId);
    if (!listeners) return;
    // Deliver asynchronously, as a database notification would arrive.
    for (const listener of [...listeners]) queueMicrotask(() => listener(signal));
  }

  #changed(taskId: string): void {
    const listeners = this.#followers.get(taskId);
    if (!listeners) return;
    for (const listener of [...listeners]) queueMicrotask(listener);
  }
}

function subscribe<L>(registry: Map<string, Set<L>>, taskId: string, listener: L): Unsubscribe {
  let listeners = registry.get(taskId);
  if (!listeners) registry.set(taskId, (listeners = new Set()));
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && registry.get(taskId) === listeners) registry.delete(taskId);
  };
}

function snapshot(record: MutableRecord): TaskRecord {
  return structuredClone(record);
}
