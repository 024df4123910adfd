import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import { LEASE_ERROR_CODE, leaseErrorMessage } from './lease-error.js';
import { announceLostRun, settleLostRun } from './lost-run.js';
import type { SqlContext } from './sql-context.js';

/** One page of the reaper's work. */
export interface FailedPage {
  /** Tasks failed now. */
  readonly failed: number;
  /** The last task id the page looked at (the next page starts after it); `null` when it saw none. */
  readonly lastId: string | null;
}

/**
 * Settles up to `limit` live tasks, ordered by id after `afterId`, of nodes whose lease has
 * expired by the database clock: a resumable task with attempts left is released for another node
 * (announced as claimable), any other fails with a -32603 "The server running this task stopped
 * (node X lease expired)" error, announced as a cancel (a node that is alive but lost its lease
 * aborts the run). The UPDATE itself re-checks the live status and the expired lease (compare-and-set;
 * River #1302): a task that completed, or a node that renewed, since the scan stays as it is.
 * Rows a writer holds are skipped, not waited on; the next round takes them.
 */
export async function failTasksOfExpiredNodes(context: SqlContext, limit: number, afterId: string | null): Promise<FailedPage> {
  const { rows } = await sql<{ id: string; last_id: string | null }>`
    WITH page AS (
      SELECT t.id
        FROM ${context.tasks} AS t
        JOIN ${context.nodes} AS n ON n.node_id = t.node_id
       WHERE n.lease_expires_at <= now()
         AND t.status IN ('working', 'input_required')
         AND (${afterId}::text IS NULL OR t.id > ${afterId}::text)
       ORDER BY t.id
       LIMIT ${limit}
         FOR UPDATE OF t SKIP LOCKED
    ), failed AS (
      UPDATE ${context.tasks} AS t
         SET ${settleLostRun(LEASE_ERROR_CODE, leaseErrorMessage(sql`t.node_id`, 'lease expired'))}
        FROM page
       WHERE t.id = page.id
         AND ${isLive}
         AND EXISTS (SELECT 1 FROM ${context.nodes} AS n WHERE n.node_id = t.node_id AND n.lease_expires_at <= now())
      RETURNING t.id, ${announceLostRun(context.channel, sql`t`)} AS notified
    )
    SELECT failed.id, (SELECT max(id) FROM page) AS last_id FROM failed
    UNION ALL
    SELECT NULL, (SELECT max(id) FROM page) WHERE NOT EXISTS (SELECT 1 FROM failed)
  `.execute(context.db);
  const failed = rows.filter((row) => row.id !== null).length;
  return { failed, lastId: rows[0]?.last_id ?? null };
}
