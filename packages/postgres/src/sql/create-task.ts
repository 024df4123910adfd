import { InvalidTaskValueError, QuotaExceededError, ownerKey, type NewTask, type TaskRecord } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { withExecutor, type SqlContext } from './sql-context.js';

/**
 * Inserts a task in `working`. With a finite `maxLive`, the owner's advisory transaction lock
 * serialises creators of one owner, so count-then-insert cannot overshoot; owners do not wait
 * on each other.
 */
export async function createTask(context: SqlContext, task: NewTask, statusMessage: string | null, maxLive: number): Promise<TaskRecord> {
  const key = ownerKey(task.owner);
  return context.db.transaction().execute(async (trx) => {
    const { tasks } = withExecutor(context, trx);
    if (Number.isFinite(maxLive)) {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
      const taken = await sql<{ taken: boolean }>`SELECT EXISTS (SELECT 1 FROM ${tasks} WHERE id = ${task.taskId}) AS taken`.execute(trx);
      if (taken.rows[0]?.taken) throw duplicateId();
      const live = await sql<{ live: number }>`
        SELECT count(*)::int AS live
          FROM ${tasks}
         WHERE owner_key = ${key}
           AND status IN ('working', 'input_required')
           AND (expires_at IS NULL OR expires_at > now())
      `.execute(trx);
      if ((live.rows[0]?.live ?? 0) >= maxLive) throw new QuotaExceededError(maxLive);
    }
    const inserted = await sql<TaskRow>`
      INSERT INTO ${tasks} (
        id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
        tool, scopes, status, status_message, created_at, last_updated_at,
        ttl_ms, expires_at, poll_interval_ms, node_id
      )
      SELECT ${task.taskId}, ${task.owner.subject}, ${task.owner.server}, ${task.owner.clientId}, ${task.owner.resource}, ${key},
             ${task.tool}, ${[...task.scopes]}::text[], 'working', ${statusMessage}, created_at, created_at,
             ${task.ttlMs}::bigint, created_at + ${task.ttlMs}::bigint * interval '1 millisecond', ${task.pollIntervalMs}::bigint, ${task.nodeId}
        FROM (SELECT date_trunc('milliseconds', now()) AS created_at) AS clock
      ON CONFLICT (id) DO NOTHING
      RETURNING *
    `.execute(trx);
    const row = inserted.rows[0];
    if (!row) throw duplicateId();
    return toTaskRecord(row);
  });
}

function duplicateId(): InvalidTaskValueError {
  return new InvalidTaskValueError('a task with this id already exists');
}
