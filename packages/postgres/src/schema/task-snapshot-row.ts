import type { JsonObject, JsonRpcErrorObject, TaskSnapshot } from '@mcp-tasks/core';
import { orderedInputs, toTaskStatus } from './task-row.js';
import type { TaskRow } from './tasks-table.js';

/** The columns a reader's statement selects (`sql/read-task.ts`): a {@link TaskSnapshot}'s. */
export type TaskSnapshotRow = Pick<
  TaskRow,
  'id' | 'status' | 'status_message' | 'created_at' | 'last_updated_at' | 'ttl_ms' | 'poll_interval_ms' | 'scopes' | 'result' | 'error'
> & {
  /** Only while `input_required`: no other status shows an input. */
  readonly inputs: TaskRow['inputs'] | null;
  readonly input_keys: TaskRow['input_keys'] | null;
};

export function toTaskSnapshot(row: TaskSnapshotRow): TaskSnapshot {
  return {
    taskId: row.id,
    scopes: row.scopes,
    status: toTaskStatus(row.status),
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    pollIntervalMs: Number(row.poll_interval_ms),
    inputs: row.input_keys === null ? {} : orderedInputs(row.inputs, row.input_keys),
    result: (row.result ?? null) as JsonObject | null,
    error: (row.error ?? null) as JsonRpcErrorObject | null,
  };
}
