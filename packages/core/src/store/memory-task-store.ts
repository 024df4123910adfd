import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { decideQuota } from '../machine/decide-quota.js';
import { StoredBytesExceededError } from '../errors/stored-bytes-exceeded-error.js';
import { outcomeChargeOf, storedBytesOf, type StoredBytesBound } from './stored-bytes.js';
import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { InputRequest, InputResponses } from '../input/input-request.js';
import { assertTaskOwner, ownerKey, type TaskOwner } from '../task/task-owner.js';
import type { JsonValue } from '../json/json-value.js';
import { DEFAULT_MAX_ATTEMPTS, type NewTask, type TaskInput, type TaskRecord, type TaskSnapshot } from '../task/task-record.js';
import { isTerminal } from '../task/task-status.js';
import { decideAnswer } from '../machine/decide-answer.js';
import { decideAsk } from '../machine/decide-ask.js';
import { decideCancel, decideRunWrite } from '../machine/decide-end.js';
import { decideRead } from '../machine/decide-read.js';
import { decidePark, isClaimable } from '../machine/decide-park.js';
import { outstandingKeys, stateOf, type RunClaim } from '../machine/task-state.js';
import type { TaskEvents } from './task-events.js';
import { TaskFanOut } from './task-fan-out.js';
import { decodeTaskCursor, isAfter, pageLimitOf, toTaskPage, type ListTasksOptions, type TaskPage } from './task-page.js';
import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  StepBegin,
  TaskControlState,
  TaskOutcome,
  TaskRef,
  TaskSignal,
  TaskStep,
  StepsOptions,
  TaskStore,
} from './task-store.js';
import { TASK_LIMITS } from './task-limits.js';
import { defaultLogger } from '../log/default-logger.js';
import { logSafe } from '../log/log-safe.js';
import type { Logger } from '../log/logger.js';
import {
  normaliseStatusMessage,
  validateClaim,
  validateInputKey,
  validateInputRequest,
  validateJsonValue,
  validateStepName,
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
  /** Where a listener's throw is reported. Default: `defaultLogger()`. */
  readonly logger?: Logger;
}

type MutableRecord = { -readonly [K in keyof TaskRecord]: TaskRecord[K] };

/** A journaled step: its starts, and its result once it finished. */
interface StepEntry {
  starts: number;
  done: boolean;
  result: JsonValue;
}

/**
 * The single-node store: tasks in a map, lost on restart. JavaScript runs one write at a time,
 * so each method's check-then-write is atomic without locks. Being one process, it delivers its
 * own {@link events}.
 */
export class MemoryTaskStore implements TaskStore {
  readonly events: TaskEvents;
  readonly #tasks = new Map<string, MutableRecord>();
  /** What each charged task costs its pool (`storage` of `create`), by task id, until it expires. */
  readonly #charges = new Map<string, { readonly key: string; bytes: number }>();
  readonly #steps = new Map<string, Map<string, StepEntry>>();
  readonly #claimable = new Set<() => void>();
  readonly #fanOut = new TaskFanOut((error, taskId) => this.#logger.error({ taskId, err: logSafe(error) }, 'a listener of a task threw'));
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger ?? defaultLogger();
    this.#sweep = setInterval(() => this.deleteExpired(), options.sweepIntervalMs ?? 60_000);
    this.#sweep.unref();
    this.events = {
      watch: (taskId, listener) => this.#fanOut.watch(taskId, listener),
      follow: async (ref, listener) => ((await this.markFollowed(ref)) ? this.#fanOut.follow(ref.taskId, listener) : undefined),
      followMany: (owner, taskIds, listener) => this.#fanOut.followMany(taskIds, listener, () => this.markFollowedMany(owner, taskIds)),
      onClaimable: (listener) => {
        this.#claimable.add(listener);
        return () => void this.#claimable.delete(listener);
      },
    };
  }

  async create(task: NewTask, options: CreateOptions): Promise<TaskRecord> {
    validateNewTask(task);
    const statusMessage = task.statusMessage == null ? null : normaliseStatusMessage(task.statusMessage);
    if (this.#tasks.has(task.taskId)) throw new InvalidTaskValueError('a task with this id already exists');
    const now = this.#now();
    if (Number.isFinite(options.maxLive) && decideQuota(this.#countLive(ownerKey(task.owner), now), options.maxLive).kind === 'refuse') {
      throw new QuotaExceededError(options.maxLive);
    }
    const charge = options.storage && this.#charge(task, options.storage, now);
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
      attempt: task.nodeId === null ? 0 : 1,
      handovers: 0,
      resumable: task.resumable ?? false,
      maxAttempts: task.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      args: task.args === undefined ? null : structuredClone(task.args),
      clientCapabilities: task.clientCapabilities == null ? null : structuredClone(task.clientCapabilities),
      traceContext: task.traceContext ?? null,
    };
    this.#tasks.set(task.taskId, record);
    if (charge) this.#charges.set(task.taskId, charge);
    if (record.nodeId === null) this.#announceClaimable();
    return snapshot(record);
  }

  async get(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    const record = this.#find(ref);
    return record && snapshot(record);
  }

  /** In memory the whole record costs no more to copy than its reader's part. */
  async read(ref: TaskRef): Promise<TaskSnapshot | undefined> {
    return this.get(ref);
  }

  async list(owner: TaskOwner, options: ListTasksOptions = {}): Promise<TaskPage> {
    assertTaskOwner(owner);
    const limit = pageLimitOf(options);
    const after = options.cursor === undefined ? undefined : decodeTaskCursor(options.cursor);
    const key = ownerKey(owner);
    const now = this.#now();
    const mine = [...this.#tasks.values()].filter(
      (record) =>
        ownerKey(record.owner) === key && (record.expiresAt === null || record.expiresAt.getTime() > now) && (after === undefined || isAfter(record, after)),
    );
    mine.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.taskId < b.taskId ? 1 : a.taskId > b.taskId ? -1 : 0));
    return toTaskPage(mine.slice(0, limit + 1).map(snapshot), limit);
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
    if (isClaimable(stateOf(record))) this.#announceClaimable();
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
    const charge = this.#charges.get(ref.taskId);
    if (charge) charge.bytes += outcomeChargeOf(outcome);
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
      states.set(ref.taskId, { status: record.status, claim: stateOf(record).claim, outstandingKeys: outstandingKeys(record) });
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

  async claim(nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined> {
    if (typeof nodeId !== 'string' || nodeId === '') throw new InvalidTaskValueError('nodeId must be a non-empty string');
    const now = this.#now();
    const held = new Map<string, number>();
    const candidates: MutableRecord[] = [];
    for (const record of this.#tasks.values()) {
      if (isTerminal(record.status) || (record.expiresAt !== null && record.expiresAt.getTime() <= now)) continue;
      const key = ownerKey(record.owner);
      if (record.nodeId !== null) held.set(key, (held.get(key) ?? 0) + 1);
      else if (isClaimable(stateOf(record)) && tools.includes(record.tool)) candidates.push(record);
    }
    // Map order is creation order, and sort is stable: the fewest held first, then the oldest.
    candidates.sort((a, b) => (held.get(ownerKey(a.owner)) ?? 0) - (held.get(ownerKey(b.owner)) ?? 0));
    const record = candidates[0];
    if (!record) return undefined;
    record.nodeId = nodeId;
    record.attempt += 1;
    this.#touch(record);
    return snapshot(record);
  }

  async release(ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateClaim(claim);
    const record = this.#findHeld(ref, claim);
    if (!record) return undefined;
    record.nodeId = null;
    record.handovers += 1;
    this.#touch(record);
    this.#announceClaimable();
    return snapshot(record);
  }

  async park(ref: TaskRef, claim: RunClaim, key: string): Promise<boolean> {
    validateRef(ref);
    validateClaim(claim);
    validateInputKey(key);
    const record = this.#find(ref);
    if (!record || decidePark(stateOf(record), claim, key).kind === 'keep') return false;
    record.nodeId = null;
    // Giving the slot back is no lost run: it does not count against maxAttempts.
    record.handovers += 1;
    this.#touch(record);
    return true;
  }

  async beginStep(ref: TaskRef, claim: RunClaim, name: string): Promise<StepBegin> {
    validateRef(ref);
    validateClaim(claim);
    validateStepName(name);
    if (!this.#findHeld(ref, claim)) return { state: 'lost' };
    const journal = this.#steps.get(ref.taskId) ?? new Map<string, StepEntry>();
    this.#steps.set(ref.taskId, journal);
    const entry = journal.get(name);
    if (entry?.done) return { state: 'done', result: structuredClone(entry.result) };
    const started: StepEntry = entry ?? { starts: 0, done: false, result: null };
    started.starts += 1;
    journal.set(name, started);
    return { state: 'run', starts: started.starts };
  }

  async finishStep(ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean> {
    validateRef(ref);
    validateClaim(claim);
    validateStepName(name);
    validateJsonValue(result, `step ${name} result`, TASK_LIMITS.maxResultBytes);
    const entry = this.#findHeld(ref, claim) && this.#steps.get(ref.taskId)?.get(name);
    if (!entry) return false;
    if (!entry.done) Object.assign(entry, { done: true, result: structuredClone(result) });
    return true;
  }

  async steps(ref: TaskRef, options: StepsOptions = {}): Promise<readonly TaskStep[]> {
    validateRef(ref);
    if (!this.#find(ref)) return [];
    return [...(this.#steps.get(ref.taskId) ?? new Map<string, StepEntry>())].map(([name, entry]) => ({
      name,
      starts: entry.starts,
      done: entry.done,
      ...(options.results && entry.done ? { result: structuredClone(entry.result) } : {}),
    }));
  }

  /** Deletes expired tasks now; returns how many. */
  deleteExpired(): number {
    const now = this.#now();
    let deleted = 0;
    for (const [taskId, record] of this.#tasks) {
      if (record.expiresAt !== null && record.expiresAt.getTime() <= now) {
        this.#tasks.delete(taskId);
        this.#steps.delete(taskId);
        this.#charges.delete(taskId);
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

  /** The charge of a new task to its pool, or {@link StoredBytesExceededError} when the pool would keep more than its bound. */
  #charge(task: NewTask, bound: StoredBytesBound, now: number): { key: string; bytes: number } {
    const key = bound.pool === 'shared' ? '*' : ownerKey(task.owner);
    const bytes = storedBytesOf(task);
    let kept = 0;
    let firstExpiry = Infinity;
    for (const [taskId, charge] of this.#charges) {
      const record = this.#tasks.get(taskId);
      const expiresAt = record?.expiresAt?.getTime() ?? Infinity;
      if (!record || charge.key !== key || expiresAt <= now) continue;
      kept += charge.bytes;
      firstExpiry = Math.min(firstExpiry, expiresAt);
    }
    if (kept + bytes > bound.maxBytes) {
      throw new StoredBytesExceededError(bound.pool, bound.maxBytes, kept, Number.isFinite(firstExpiry) ? firstExpiry - now : undefined);
    }
    return { key, bytes };
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

  #announceClaimable(): void {
    queueMicrotask(() => {
      for (const listener of this.#claimable) listener();
    });
  }

  #changed(taskId: string): void {
    queueMicrotask(() => this.#fanOut.changed(taskId));
  }
}

function snapshot(record: MutableRecord): TaskRecord {
  return structuredClone(record);
}
