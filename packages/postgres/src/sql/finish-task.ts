import type { RunClaim, TaskOutcome, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { normaliseStatusMessage, ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { heldBy, isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { notifyFollowers } from './notify-followers.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/**
 * Ends a live task with its outcome, compare-and-set on the live statuses and the run's claim:
 * `undefined` when it already ended (a cancel won), is gone, or the run no longer holds it. Only followed tasks NOTIFY (for notifications/tasks); the running node needs no signal.
 */
export async function finishTask(context: SqlContext, ref: TaskRef, outcome: TaskOutcome, claim: RunClaim | undefined): Promise<TaskRecord | undefined> {
  const result = outcome.status === 'completed' ? JSON.stringify(outcome.result) : null;
  const error = outcome.status === 'failed' ? JSON.stringify(outcome.error) : null;
  // A failure replaces the status message; a completion keeps the last progress message.
  const statusMessage = outcome.status === 'failed' ? sql`${normaliseStatusMessage(outcome.statusMessage)}` : sql`status_message`;
  const rows = await preparedRows(
    context,
    'finish_task',
    sql<TaskRow>`
    UPDATE ${context.tasks}
       SET status = ${outcome.status},
           result = ${result}::jsonb,
           error = ${error}::jsonb,
           status_message = ${statusMessage},
           last_updated_at = ${touchedAt}
     WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
    RETURNING *, ${notifyFollowers(context.channel)}
  `,
  );
  return rows[0] && toTaskRecord(rows[0]);
}
