import { DEFAULT_MAX_ATTEMPTS, InvalidTaskValueError, QuotaExceededError, StoredBytesExceededError, ownerKey, storedBytesOf, type CreateOptions, type NewTask, type TaskRecord } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { notifyClaimable } from './notify-claimable.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** The SQLSTATE `create_durable_task()` raises when the owner is at its limit (migration 0003). */
const QUOTA_EXCEEDED = 'MTQ01';
/** The SQLSTATE `charge_task_storage()` raises when the pool would keep more than its bound (migration 0012); its DETAIL is JSON. */
const STORED_BYTES_EXCEEDED = 'MTQ02';

/**
 * Inserts a task in `working`, in one round trip through `create_durable_task()`: with a finite
 * `maxLive` the function takes the owner's advisory transaction lock, counts the owner's live
 * tasks and inserts, so concurrent creators of one owner cannot overshoot and owners never wait on
 * each other. With a `storage` bound the task's bytes are charged to its pool in the same
 * statement, under the same lock for an owner's pool (`charge_task_storage()`, migration 0012).
 * A queued task (no node) is announced to the nodes as claimable.
 */
export async function createTask(context: SqlContext, task: NewTask, statusMessage: string | null, options: CreateOptions): Promise<TaskRecord> {
  const { owner } = task;
  const { maxLive, storage } = options;
  try {
    const rows = await preparedRows(
      context,
      'create_task',
      sql<TaskRow>`
      SELECT created.*, ${notifyClaimable(context.channel, sql`created`)}
        FROM ${context.createTaskFunction}(
          ${task.taskId}, ${owner.subject}, ${owner.server}, ${owner.clientId}, ${owner.resource}, ${ownerKey(owner)},
          ${task.tool}, ${[...task.scopes]}::text[], ${statusMessage}, ${task.ttlMs}::bigint, ${task.pollIntervalMs}::bigint,
          ${task.nodeId}, ${Number.isFinite(maxLive) ? maxLive : null}::integer,
          ${task.args === undefined ? null : JSON.stringify(task.args)}::jsonb,
          ${task.clientCapabilities == null ? null : JSON.stringify(task.clientCapabilities)}::jsonb,
          ${task.resumable ?? false}::boolean, ${task.maxAttempts ?? DEFAULT_MAX_ATTEMPTS}::integer,
          ${task.traceContext ?? null}::text,
          ${storage?.pool === 'shared'}::boolean, ${storage ? storedBytesOf(task) : null}::bigint, ${storage?.maxBytes ?? null}::bigint
        ) AS created
    `,
    );
    const row = rows[0];
    if (!row) throw new InvalidTaskValueError('a task with this id already exists');
    return toTaskRecord(row);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === QUOTA_EXCEEDED) throw new QuotaExceededError(maxLive);
    if (code === STORED_BYTES_EXCEEDED && storage) throw storedBytesExceeded(storage.pool, (error as { detail?: string }).detail);
    throw error;
  }
}

/** The typed refusal of a full storage pool, from the DETAIL (JSON) the database gave. */
export function storedBytesExceeded(pool: 'owner' | 'shared', detail: string | undefined): StoredBytesExceededError {
  const { kept, limit, freesInMs } = JSON.parse(detail ?? '{}') as { kept?: number; limit?: number; freesInMs?: number | null };
  return new StoredBytesExceededError(pool, Number(limit), Number(kept), freesInMs == null ? undefined : Number(freesInMs));
}
