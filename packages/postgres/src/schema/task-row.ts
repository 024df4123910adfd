import type { ClientCapabilities, JsonObject, JsonRpcErrorObject, JsonValue, TaskInput, TaskRecord, TaskSnapshot, TaskStatus } from '@mcp-tasks/core';
import { isTaskStatus } from '@mcp-tasks/core';
import type { TaskRow } from './tasks-table.js';

/**
 * The columns a reader's statement selects (`sql/read-task.ts`, `sql/read-task-batch.ts`): a
 * {@link TaskSnapshot}'s, the inputs only while `input_required` (no other status shows one).
 */
export type TaskSnapshotRow = Pick<
  TaskRow,
  'id' | 'status' | 'status_message' | 'created_at' | 'last_updated_at' | 'ttl_ms' | 'poll_interval_ms' | 'scopes' | 'result' | 'error' | 'trace_context'
> & {
  readonly inputs: TaskRow['inputs'] | null;
  readonly input_keys: TaskRow['input_keys'] | null;
};

/** Turns a reader's row into the snapshot the store returns: a fresh object, inputs in the order they were asked. */
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
    ...(row.trace_context ? { traceContext: row.trace_context } : {}),
  };
}

/** Turns a whole row into the record the store returns: its snapshot and the rest of the columns. */
export function toTaskRecord(row: TaskRow): TaskRecord {
  return {
    ...toTaskSnapshot(row),
    owner: { subject: row.owner_subject, server: row.owner_server, clientId: row.owner_client_id, resource: row.owner_resource },
    tool: row.tool,
    expiresAt: row.expires_at,
    nodeId: row.node_id,
    attempt: row.attempt,
    handovers: row.handovers,
    resumable: row.resumable,
    maxAttempts: row.max_attempts,
    args: (row.args ?? null) as JsonValue | null,
    clientCapabilities: (row.client_capabilities ?? null) as ClientCapabilities | null,
  };
}

/** The stored inputs in the order they were asked (jsonb keeps no order of its own). */
export function orderedInputs(stored: unknown, keys: readonly string[]): Record<string, TaskInput> {
  const byKey = (stored ?? {}) as Record<string, TaskInput>;
  const inputs: Record<string, TaskInput> = {};
  for (const key of keys) {
    const input = byKey[key];
    if (input) inputs[key] = input;
  }
  return inputs;
}

export function toTaskStatus(status: string): TaskStatus {
  // The check constraint makes anything else impossible; a failure here means a foreign writer.
  if (!isTaskStatus(status)) throw new Error(`mcp-tasks: unexpected status ${JSON.stringify(status)} in the tasks table`);
  return status;
}
