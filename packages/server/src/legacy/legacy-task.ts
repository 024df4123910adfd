import type { TaskRecord } from '@mcp-tasks/core';

/** The `_meta` key that ties a 2025-11-25 message to its task. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** The 2025-11-25 protocol revision's `Task`. */
export interface LegacyTask {
  taskId: string;
  status: TaskRecord['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds from creation the task is kept; `null`: unlimited. */
  ttl: number | null;
  pollInterval: number;
}

/**
 * A task row as a 2025-11-25 client reads it. The status is the row's: a tool that returned an
 * `isError` result is `completed` here as for 2026-07-28 clients (one row, one status), and
 * `tasks/result` hands that result over unchanged; `failed` stays what it is in the row, a
 * JSON-RPC error.
 */
export function toLegacyTask(record: TaskRecord): LegacyTask {
  const task: LegacyTask = {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    lastUpdatedAt: record.lastUpdatedAt.toISOString(),
    ttl: record.ttlMs,
    pollInterval: record.pollIntervalMs,
  };
  if (record.statusMessage !== null) task.statusMessage = record.statusMessage;
  return task;
}
