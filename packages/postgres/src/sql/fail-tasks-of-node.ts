import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import { LEASE_ERROR_CODE, leaseErrorMessage, type LeaseFailureReason } from './lease-error.js';
import { announceLostRun, settleLostRun } from './lost-run.js';
import type { SqlContext } from './sql-context.js';

/**
 * Settles (releases a resumable task with attempts left, fails any other) up to `limit` live tasks of `nodeId` (a node settling what an earlier incarnation left,
 * or what it ran before it found its lease lost), compare-and-set on the live status, and
 * announces each (a failure as a cancel, so a run still going on this node aborts). Returns how many.
 */
export async function failTasksOfNode(context: SqlContext, nodeId: string, reason: LeaseFailureReason, limit: number): Promise<number> {
  const message = leaseErrorMessage(sql`${nodeId}::text`, reason);
  const { rows } = await sql<{ id: string }>`
    UPDATE ${context.tasks}
       SET ${settleLostRun(LEASE_ERROR_CODE, message)}
     WHERE id IN (SELECT id FROM ${context.tasks}
                   WHERE node_id = ${nodeId} AND ${isLive}
                   ORDER BY id
                   LIMIT ${limit}
                     FOR UPDATE)
       AND ${isLive}
    RETURNING id, ${announceLostRun(context.channel, context.tasks)} AS notified
  `.execute(context.db);
  return rows.length;
}
