import type { RunClaim, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { heldBy, isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { notifyClaimable } from './notify-claimable.js';
import { notifyFollowers } from './notify-followers.js';
import type { SqlContext } from './sql-context.js';

/** What a client reads while a handed-over task waits for its next run. */
export const HANDOVER_STATUS_MESSAGE = 'Handed over: resuming on another server';

/**
 * Hands a live task that `claim` holds back for any node to claim (a draining node), counting a
 * hand-over, not a lost attempt; announces it as claimable. `undefined` when the claim no longer
 * holds it.
 */
export async function releaseTask(context: SqlContext, ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined> {
  const { rows } = await sql<TaskRow>`
    UPDATE ${context.tasks} AS t
       SET node_id = NULL,
           handovers = handovers + 1,
           status_message = ${HANDOVER_STATUS_MESSAGE},
           last_updated_at = ${touchedAt}
     WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
    RETURNING *, ${notifyClaimable(context.channel, sql`t`)}, ${notifyFollowers(context.channel)}
  `.execute(context.db);
  return rows[0] && toTaskRecord(rows[0]);
}
