import type { OwedUpstreamCancel } from '@mcp-tasks/core';
import { sql } from 'kysely';
import type { UpstreamCancelsTable } from './upstream-cancels-table.js';

/**
 * Claims owed cancels that are due, oldest due first: each moves `leaseMs` forward (no other node
 * takes it meanwhile; a node lost mid-attempt leaves it due again then) and counts the attempt.
 * SKIP LOCKED: two nodes claiming at once take different rows. The claim is the attempt: its time is
 * kept (`last_attempt_at`, migration 0018) for the task's history.
 */
export async function claimDueUpstreamCancels(context: UpstreamCancelsTable, upstreams: readonly string[], limit: number, leaseMs: number): Promise<OwedUpstreamCancel[]> {
  if (upstreams.length === 0 || limit <= 0) return [];
  const { rows } = await sql<{ task_id: string; upstream: string; upstream_task_id: string; upstream_session: string | null; upstream_subject: string | null; attempts: number }>`
    UPDATE ${context.table} AS owed
       SET attempts = owed.attempts + 1,
           last_attempt_at = now(),
           next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
      FROM (
        SELECT task_id
          FROM ${context.table}
         WHERE state = 'pending' AND next_attempt_at <= now() AND upstream = ANY(${[...upstreams]}::text[])
         ORDER BY next_attempt_at
         LIMIT ${limit}
           FOR UPDATE SKIP LOCKED
      ) AS due
     WHERE owed.task_id = due.task_id AND owed.state = 'pending'
    RETURNING owed.task_id, owed.upstream, owed.upstream_task_id, owed.upstream_session, owed.upstream_subject, owed.attempts
  `.execute(context.db);
  return rows.map((row) => ({
    taskId: row.task_id,
    upstream: row.upstream,
    upstreamTaskId: row.upstream_task_id,
    ...(row.upstream_session === null ? {} : { session: row.upstream_session }),
    ...(row.upstream_subject === null ? {} : { subject: row.upstream_subject }),
    attempts: row.attempts,
  }));
}
