import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * The finished (completed, failed, cancelled) unexpired tasks by node and status, counted again
 * into the `cluster_stats` row beside its live counts. A scan of every task kept until its TTL:
 * run only when a round took the turn for it (`compute-cluster-stats.ts`).
 */
export async function recountFinishedTasks(context: SqlContext): Promise<void> {
  await sql`
    UPDATE ${context.clusterStats} AS s
       SET counts = coalesce((SELECT jsonb_agg(c.count ORDER BY c.count ->> 'nodeId', c.count ->> 'status')
                                FROM (SELECT live.count FROM jsonb_array_elements(s.counts) AS live(count)
                                       WHERE live.count ->> 'status' IN ('working', 'input_required')
                                      UNION ALL
                                      SELECT jsonb_build_object('nodeId', node_id, 'status', status, 'count', count(*))
                                        FROM ${context.tasks}
                                       WHERE NOT ${isLive} AND (expires_at IS NULL OR expires_at > now())
                                       GROUP BY node_id, status) AS c),
                             '[]'::jsonb)
  `.execute(context.db);
}
