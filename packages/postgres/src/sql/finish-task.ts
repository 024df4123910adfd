import type { RunClaim, TaskOutcome, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { normaliseStatusMessage, outcomeChargeOf, ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { heldBy, isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { notifyFollowers } from './notify-followers.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/**
 * Ends a live task with its outcome, compare-and-set on the live statuses and the run's claim:
 * `undefined` when it already ended (a cancel won), is gone, or the run no longer holds it. Only followed tasks NOTIFY (for notifications/tasks); the running node needs no signal.
 * A result or error larger than its row's allowance is charged to the task's storage pool in the
 * same statement (migration 0012): the task still finishes however large it is, and what the pool
 * then keeps refuses its next create. A small one, the common case, writes no counter at all.
 */
export async function finishTask(context: SqlContext, ref: TaskRef, outcome: TaskOutcome, claim: RunClaim | undefined): Promise<TaskRecord | undefined> {
  const result = outcome.status === 'completed' ? JSON.stringify(outcome.result) : null;
  const error = outcome.status === 'failed' ? JSON.stringify(outcome.error) : null;
  // A failure replaces the status message; a completion keeps the last progress message.
  const statusMessage = outcome.status === 'failed' ? sql`${normaliseStatusMessage(outcome.statusMessage)}` : sql`status_message`;
  const charge = outcomeChargeOf(outcome);
  return lookInPlace(ref.taskId, async (place) => {
    const rows = await preparedRows(
      context,
      'finish_task',
      sql<TaskRow>`
      WITH finished AS (
        UPDATE ${context.tasks}
           SET status = ${outcome.status},
               result = ${result}::jsonb,
               error = ${error}::jsonb,
               status_message = ${statusMessage},
               last_updated_at = ${touchedAt}
         WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
        RETURNING *, ${notifyFollowers(context.channel)}
      ), charged AS (
        INSERT INTO ${context.storage} (storage_key, expires_by, shard, bytes)
        SELECT CASE storage_pool WHEN 'shared' THEN '*' ELSE owner_key END, ${context.storageBucket}(expires_at),
               CASE storage_pool WHEN 'shared' THEN floor(random() * 8)::smallint ELSE 0 END, ${charge}::bigint
          FROM finished
         WHERE storage_pool IS NOT NULL AND ${charge}::bigint > 0
        ON CONFLICT (storage_key, expires_by, shard) DO UPDATE SET bytes = ${context.storage}.bytes + EXCLUDED.bytes
      )
      SELECT * FROM finished
    `,
    );
    return rows[0] && toTaskRecord(rows[0]);
  });
}
