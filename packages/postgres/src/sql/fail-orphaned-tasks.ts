import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import { notifyFollowers } from './notify-followers.js';
import { announceLostRun, settleLostRun } from './lost-run.js';
import type { SqlContext } from './sql-context.js';

/** The JSON-RPC code of a rescued task: -32603 Internal error (the server lost the outcome, not the call). */
export const ORPHAN_ERROR_CODE = -32603;

/** What a client reads in `error.message` of a task its node no longer ran. */
export function orphanErrorText(nodeId: string): string {
  return `The server running this task lost its run before the outcome was recorded (node ${nodeId})`;
}

/**
 * Settles (releases a resumable task with attempts left, fails any other) the given tasks of `nodeId` that are still live, compare-and-set on the live status and
 * the node (a task that ended since the scan stays as it ended), and tells their followers.
 * Returns how many it failed.
 */
export async function failOrphanedTasks(context: SqlContext, nodeId: string, taskIds: readonly string[]): Promise<number> {
  if (taskIds.length === 0) return 0;
  const message = orphanErrorText(nodeId);
  const { rows } = await sql<{ id: string }>`
    UPDATE ${context.tasks}
       SET ${settleLostRun(ORPHAN_ERROR_CODE, sql<string>`${message}::text`)}
     WHERE id = ANY(${[...taskIds]}::text[])
       AND node_id = ${nodeId}
       AND ${isLive}
    RETURNING id, ${notifyFollowers(context.channel)}, CASE WHEN node_id IS NULL THEN ${announceLostRun(context.channel, context.tasks)} END AS released_notified
  `.execute(context.db);
  return rows.length;
}
