import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * The leader's round of the cluster's counts: unexpired tasks by node and status, and the oldest
 * live one (and each tool's), written to the single `cluster_stats` row, unless another node wrote it less than
 * `freshMs` ago (then nothing is counted: the freshness check gates the whole SELECT, so a round
 * that comes right after another node's costs one index probe). Whether it computed.
 */
export async function computeClusterStats(context: SqlContext, nodeId: string, freshMs: number): Promise<boolean> {
  const unexpired = sql`(expires_at IS NULL OR expires_at > now())`;
  const { rows } = await sql<{ computed: boolean }>`
    INSERT INTO ${context.clusterStats} AS s (id, computed_at, computed_by, counts, oldest_live_created_at, oldest_live_by_tool)
    SELECT true, now(), ${nodeId},
           coalesce((SELECT jsonb_agg(jsonb_build_object('nodeId', c.node_id, 'status', c.status, 'count', c.n) ORDER BY c.node_id, c.status)
                       FROM (SELECT node_id, status, count(*) AS n FROM ${context.tasks} WHERE ${unexpired} GROUP BY node_id, status) c),
                    '[]'::jsonb),
           (SELECT min(created_at) FROM ${context.tasks} WHERE ${isLive} AND ${unexpired}),
           jsonb_build_object('computedAt', now(), 'tools',
             coalesce((SELECT jsonb_object_agg(o.tool, o.oldest)
                         FROM (SELECT tool, min(created_at) AS oldest FROM ${context.tasks} WHERE ${isLive} AND ${unexpired} GROUP BY tool) o),
                      '{}'::jsonb))
     WHERE NOT EXISTS (SELECT 1 FROM ${context.clusterStats} WHERE computed_at > now() - make_interval(secs => ${freshMs / 1000}))
    ON CONFLICT (id) DO UPDATE
       SET computed_at = excluded.computed_at, computed_by = excluded.computed_by,
           counts = excluded.counts, oldest_live_created_at = excluded.oldest_live_created_at,
           oldest_live_by_tool = excluded.oldest_live_by_tool
    RETURNING true AS computed
  `.execute(context.db);
  return rows.length > 0;
}
