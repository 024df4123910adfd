import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * The finished (completed, failed, cancelled) unexpired tasks by node and status, counted again
 * into the `cluster_stats` row beside its live counts, when they were last counted `dueMs` ago or
 * more (or never). A scan of every task kept until its TTL: the leader runs it once in that
 * interval, not every round. Whether it counted.
 */
export async function recountFinishedTasks(context: SqlContext, dueMs: number): Promise<boolean> {
  const { rows } = await sql<{ counted: boolean }>`
    UPDATE ${context.clusterStats} AS s
       SET counts = coalesce((SELECT jsonb_agg(c.count ORDER BY c.count ->> 'nodeId', c.count ->> 'status')
                                FROM (SELECT live.count FROM jsonb_array_elements(s.counts) AS live(count)
                                       WHERE live.count ->> 'status' IN ('working', 'input_required')
                                      UNION ALL
                                      SELECT jsonb_build_object('nodeId', node_id, 'status', status, 'count', count(*))
                                        FROM ${context.tasks}
                                       WHERE NOT ${isLive} AND (expires_at IS NULL OR expires_at > now())
                                       GROUP BY node_id, status) AS c),
                             '[]'::jsonb),
           finished_counted_at = now()
     WHERE s.finished_counted_at IS NULL OR s.finished_counted_at <= now() - make_interval(secs => ${dueMs / 1000})
    RETURNING true AS counted
  `.execute(context.db);
  return rows.length > 0;
}
