import type { RunClaim, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { heldBy, isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { notifyFollowers } from './notify-followers.js';
import type { SqlContext } from './sql-context.js';

/**
 * Sets the status message of a live task the run holds; `undefined` when it is not live, not
 * visible or not held. Progress is a change followers see, so a followed task announces it; an
 * unfollowed one (the hot path) pays no NOTIFY.
 */
export async function setStatusMessage(context: SqlContext, ref: TaskRef, statusMessage: string, claim: RunClaim | undefined): Promise<TaskRecord | undefined> {
  return lookInPlace(ref.taskId, async (place) => {
    const { rows } = await sql<TaskRow>`
      UPDATE ${context.tasks}
         SET status_message = ${statusMessage},
             last_updated_at = ${touchedAt}
       WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
      RETURNING *, ${notifyFollowers(context.channel)}
    `.execute(context.db);
    return rows[0] && toTaskRecord(rows[0]);
  });
}
