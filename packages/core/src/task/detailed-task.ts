import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { InputRequests } from '../input/input-request.js';
import type { JsonObject } from '../json/json-value.js';
import { outstandingInputs, type TaskSnapshot } from './task-record.js';
import type { TaskStatus } from './task-status.js';

/** The extension's `Task`: what a CreateTaskResult carries. */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/**
 * The extension's `DetailedTask`: a `Task` with the payload of its status inlined — the
 * outstanding `inputRequests`, the `result`, or the `error`. `tasks/get` and `notifications/tasks`
 * both send exactly this.
 */
export type DetailedTask =
  | (TaskView & { status: 'working' })
  | (TaskView & { status: 'input_required'; inputRequests: InputRequests })
  | (TaskView & { status: 'completed'; result: JsonObject })
  | (TaskView & { status: 'failed'; error: JsonRpcErrorObject })
  | (TaskView & { status: 'cancelled' });

/** The `Task` fields of a record, without status payloads. */
export function toTaskView(record: TaskSnapshot): TaskView {
  const view: TaskView = {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    lastUpdatedAt: record.lastUpdatedAt.toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
  if (record.statusMessage !== null) view.statusMessage = record.statusMessage;
  return view;
}

/**
 * The `DetailedTask` of a record. A completed task's result carries `resultType: "complete"`,
 * since it is the standard result of the request the task stands for.
 */
export function toDetailedTask(record: TaskSnapshot): DetailedTask {
  const view = toTaskView(record);
  switch (record.status) {
    case 'input_required':
      return { ...view, status: 'input_required', inputRequests: outstandingInputs(record) };
    case 'completed':
      return { ...view, status: 'completed', result: { resultType: 'complete', ...(record.result ?? {}) } };
    case 'failed':
      return {
        ...view,
        status: 'failed',
        error: record.error ?? { code: -32603, message: 'Internal error' },
      };
    case 'working':
      return { ...view, status: 'working' };
    case 'cancelled':
      return { ...view, status: 'cancelled' };
  }
}
