import { sql } from 'kysely';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import { LEASE_ERROR_CODE, leaseErrorMessage, type LeaseFailureReason } from './lease-error.js';
import type { SqlContext } from './sql-context.js';

/**
 * Fails up to `limit` live tasks of `nodeId` (a node settling what an earlier incarnation left,
 * or what it ran before it found its lease lost), compare-and-set on the live status, and
 * announces each as a cancel so a run still going on this node aborts. Returns how many.
 */
export async function failTasksOfNode(context: SqlContext, nodeId: string, reason: LeaseFailureReason, limit: number): Promise<number> {
  const message = leaseErrorMessage(sql`${nodeId}::text`, reason);
  const { rows } = await sql<{ id: string }>`
    UPDATE ${context.tasks}
       SET status = 'failed',
           error = jsonb_build_object('code', ${LEASE_ERROR_CODE}::int, 'message', ${message}),
           status_message = ${message},
           result = NULL,
           last_updated_at = ${touchedAt}
     WHERE id IN (SELECT id FROM ${context.tasks}
                   WHERE node_id = ${nodeId} AND ${isLive}
                   ORDER BY id
                   LIMIT ${limit}
                     FOR UPDATE)
       AND ${isLive}
    RETURNING id, pg_notify(${context.channel}, json_build_object('op', 'cancel', 'taskId', id)::text)::text AS notified
  `.execute(context.db);
  return rows.length;
}
