import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import { notifyFollowers } from './notify-followers.js';
import { announceLostRun, settleLostRun } from './lost-run.js';
import type { LiveTaskOfNode } from './read-live-tasks-of-node.js';
import type { SqlContext } from './sql-context.js';

/** The JSON-RPC code of a rescued task: -32603 Internal error (the server lost the outcome, not the call). */
export const ORPHAN_ERROR_CODE = -32603;

/** What a client reads in `error.message` of a task its node no longer ran. */
export function orphanErrorText(nodeId: string): string {
  return `The server running this task lost its run before the outcome was recorded (node ${nodeId})`;
}

/**
 * Settles (releases a resumable task with attempts left, fails any other) the given tasks of
 * `nodeId` that are still live and still held by the attempt the round read, compare-and-set on
 * all three (a task that ended since the scan stays as it ended; one released and claimed again
 * since, even by this node, belongs to its new run), and tells their followers. Returns how many
 * it settled.
 */
export async function failOrphanedTasks(context: SqlContext, nodeId: string, tasks: readonly LiveTaskOfNode[]): Promise<number> {
  if (tasks.length === 0) return 0;
  const message = orphanErrorText(nodeId);
  const { rows } = await sql<{ id: string }>`
    UPDATE ${context.tasks} AS t
       SET ${settleLostRun(ORPHAN_ERROR_CODE, sql<string>`${message}::text`)}
      FROM unnest(${tasks.map((task) => task.id)}::text[], ${tasks.map((task) => task.attempt)}::int[]) AS orphan(orphan_id, orphan_attempt)
     WHERE t.id = orphan.orphan_id
       AND t.attempt = orphan.orphan_attempt
       AND t.node_id = ${nodeId}
       AND ${isLive}
    RETURNING t.id, ${notifyFollowers(context.channel)}, CASE WHEN t.node_id IS NULL THEN ${announceLostRun(context.channel, sql`t`)} END AS released_notified
  `.execute(context.db);
  return rows.length;
}
