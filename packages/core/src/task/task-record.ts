import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputRequest, InputResponse } from '../input/input-request.js';
import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
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
  /** The node that runs the task; null when no run holds it (queued, or released for another node to claim). */
  readonly nodeId: string | null;
  /** Which run of the task holds it: 1 for the first, incremented by every claim (0: never claimed). */
  readonly attempt: number;
  /** Runs that ended by a hand-over (a draining node), which do not count against `maxAttempts`. */
  readonly handovers: number;
  /** Whether a lost run is released for another node to run again instead of failing the task. */
  readonly resumable: boolean;
  /** Runs a resumable task may lose before it fails (hand-overs not counted). */
  readonly maxAttempts: number;
  /** The tool's arguments, so any node can run it (null: not stored, an older writer). */
  readonly args: JsonValue | null;
  /** The client capabilities the creating request declared (null: not known). */
  readonly clientCapabilities: ClientCapabilities | null;
  /**
   * The W3C `traceparent` of the span that created the task (the `tools/call` request), so a run
   * on another node and every later request on the task join that trace. Absent without tracing.
   */
  readonly traceContext?: string | null;
}

/**
 * What a reader of a task sees (`tasks/get`, the scope check): the fields of a `DetailedTask`
 * and the scopes. A store may read only these, so polling never pays for the owner, the tool's
 * arguments or the capabilities; while a task is not `input_required` its `inputs` may be empty,
 * since only the outstanding ones are ever shown.
 */
export type TaskSnapshot = Pick<
  TaskRecord,
  'taskId' | 'status' | 'statusMessage' | 'createdAt' | 'lastUpdatedAt' | 'ttlMs' | 'pollIntervalMs' | 'inputs' | 'result' | 'error' | 'scopes' | 'traceContext'
>;

/** What a caller gives a store to create a task. */
export interface NewTask {
  readonly taskId: string;
  readonly owner: TaskOwner;
  readonly tool: string;
  readonly scopes: readonly string[];
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  /** The node whose run holds the task from the start; null: queued for any node to claim. */
  readonly nodeId: string | null;
  /** An optional first status message. */
  readonly statusMessage?: string | null;
  /** The tool's arguments, stored so that another node can run the task. Default null. */
  readonly args?: JsonValue;
  /** The creating request's client capabilities, stored with the task for any later run. */
  readonly clientCapabilities?: ClientCapabilities | null;
  /** See {@link TaskRecord.traceContext}. */
  readonly traceContext?: string | null;
  /** See {@link TaskRecord.resumable}. Default false. */
  readonly resumable?: boolean;
  /** See {@link TaskRecord.maxAttempts}. Default 3. */
  readonly maxAttempts?: number;
}

/** The default of {@link NewTask.maxAttempts}. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** The keys of `record` still waiting for an answer, with their requests. */
export function outstandingInputs(record: Pick<TaskRecord, 'inputs'>): Record<string, InputRequest> {
  const outstanding: Record<string, InputRequest> = {};
  for (const [key, input] of Object.entries(record.inputs)) {
    if (input.response === undefined) outstanding[key] = input.request;
  }
  return outstanding;
}
