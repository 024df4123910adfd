import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputRequest, InputResponse } from '../input/input-request.js';
import type { JsonObject } from '../json/json-value.js';
import type { TaskOwner } from './task-owner.js';
import type { TaskStatus } from './task-status.js';

/** One input key over a task's life: the request, and the first answer once there is one. */
export interface TaskInput {
  readonly request: InputRequest;
  /** The first answer; later answers to the key are ignored. */
  readonly response?: InputResponse;
}

/** A task as a store holds it. Stores return fresh objects; mutating one changes nothing stored. */
export interface TaskRecord {
  readonly taskId: string;
  readonly owner: TaskOwner;
  /** The tool whose run this task represents. */
  readonly tool: string;
  /** The scopes the tool required when the task started; every later request on it needs them. */
  readonly scopes: readonly string[];
  readonly status: TaskStatus;
  readonly statusMessage: string | null;
  readonly createdAt: Date;
  readonly lastUpdatedAt: Date;
  /** Time to live from creation, `null` for unlimited. */
  readonly ttlMs: number | null;
  /** `createdAt + ttlMs`; past it the task reads as absent. */
  readonly expiresAt: Date | null;
  readonly pollIntervalMs: number;
  /** Every input key asked over the task's life, answered or not. */
  readonly inputs: Readonly<Record<string, TaskInput>>;
  /** Set when `completed`. */
  readonly result: JsonObject | null;
  /** Set when `failed`. */
  readonly error: JsonRpcErrorObject | null;
  /** The node that runs the task (null when unknown). */
  readonly nodeId: string | null;
}

/** What a caller gives a store to create a task. */
export interface NewTask {
  readonly taskId: string;
  readonly owner: TaskOwner;
  readonly tool: string;
  readonly scopes: readonly string[];
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  readonly nodeId: string | null;
  /** An optional first status message. */
  readonly statusMessage?: string | null;
}

/** The keys of `record` still waiting for an answer, with their requests. */
export function outstandingInputs(record: Pick<TaskRecord, 'inputs'>): Record<string, InputRequest> {
  const outstanding: Record<string, InputRequest> = {};
  for (const [key, input] of Object.entries(record.inputs)) {
    if (input.response === undefined) outstanding[key] = input.request;
  }
  return outstanding;
}
