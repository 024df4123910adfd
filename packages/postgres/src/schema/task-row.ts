import type { ClientCapabilities, JsonObject, JsonRpcErrorObject, JsonValue, TaskInput, TaskRecord, TaskStatus } from '@mcp-tasks/core';
import { isTaskStatus } from '@mcp-tasks/core';
import type { TaskRow } from './tasks-table.js';

/** Turns a row into the record the store returns: a fresh object, inputs in the order they were asked. */
export function toTaskRecord(row: TaskRow): TaskRecord {
  const inputs = orderedInputs(row.inputs, row.input_keys);
  return {
    taskId: row.id,
    owner: { subject: row.owner_subject, server: row.owner_server, clientId: row.owner_client_id, resource: row.owner_resource },
    tool: row.tool,
    scopes: row.scopes,
    status: toTaskStatus(row.status),
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    expiresAt: row.expires_at,
    pollIntervalMs: Number(row.poll_interval_ms),
    inputs,
    result: (row.result ?? null) as JsonObject | null,
    error: (row.error ?? null) as JsonRpcErrorObject | null,
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
