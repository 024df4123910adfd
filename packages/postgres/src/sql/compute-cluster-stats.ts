import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * The leader's round of the cluster's counts: live (working, input_required) unexpired tasks by
 * node and status, and the oldest live one (and each tool's), written to the single
 * `cluster_stats` row with the finished counts the row already holds, unless another node wrote
 * it less than `freshMs` ago (then nothing is counted: the freshness check gates the whole SELECT,
 * so a round that comes right after another node's costs one index probe). Every count here goes
 * through the live partial indexes, so a round costs the live work, never the history kept until
 * its TTL. The finished ones (`recount-finished-tasks.ts`, a scan of the history) are due when last
 * counted `finishedDueMs` ago or more: the round takes that turn by writing `finished_counted_at`,
 * so a count that then fails (its timeout on a huge history) is not tried again until the next
 * turn. `finishedDueMs` false: no finished counts at all.
 */
export async function computeClusterStats(
  context: SqlContext,
  nodeId: string,
  freshMs: number,
  finishedDueMs: number | false,
): Promise<{ computed: boolean; recountFinished: boolean }> {
  const unexpired = sql`(expires_at IS NULL OR expires_at > now())`;
  const carryFinished = finishedDueMs !== false;
  const { rows } = await sql<{ recount_finished: boolean }>`
    INSERT INTO ${context.clusterStats} AS s (id, computed_at, computed_by, counts, oldest_live_created_at, oldest_live_by_tool, finished_counted_at)
    SELECT true, now(), ${nodeId},
           coalesce((SELECT jsonb_agg(c.count ORDER BY c.count ->> 'nodeId', c.count ->> 'status')
                       FROM (SELECT jsonb_build_object('nodeId', node_id, 'status', status, 'count', count(*)) AS count
                               FROM ${context.tasks} WHERE ${isLive} AND ${unexpired} GROUP BY node_id, status
                             UNION ALL
                             SELECT kept.count
                               FROM ${context.clusterStats} AS previous, jsonb_array_elements(previous.counts) AS kept(count)
                              WHERE ${carryFinished} AND kept.count ->> 'status' NOT IN ('working', 'input_required')) AS c),
                    '[]'::jsonb),
           (SELECT min(created_at) FROM ${context.tasks} WHERE ${isLive} AND ${unexpired}),
           jsonb_build_object('computedAt', now(), 'tools',
             coalesce((SELECT jsonb_object_agg(o.tool, o.oldest)
                         FROM (SELECT tool, min(created_at) AS oldest FROM ${context.tasks} WHERE ${isLive} AND ${unexpired} GROUP BY tool) o),
                      '{}'::jsonb)),
           CASE WHEN ${carryFinished} THEN now() END
     WHERE NOT EXISTS (SELECT 1 FROM ${context.clusterStats} WHERE computed_at > now() - make_interval(secs => ${freshMs / 1000}))
    ON CONFLICT (id) DO UPDATE
       SET computed_at = excluded.computed_at, computed_by = excluded.computed_by,
           counts = excluded.counts, oldest_live_created_at = excluded.oldest_live_created_at,
           oldest_live_by_tool = excluded.oldest_live_by_tool,
           finished_counted_at = CASE WHEN ${carryFinished}
                                       AND (s.finished_counted_at IS NULL
                                            OR s.finished_counted_at <= now() - make_interval(secs => ${(finishedDueMs || 0) / 1000}))
                                      THEN now() ELSE s.finished_counted_at END
    RETURNING ${carryFinished} AND s.finished_counted_at = now() AS recount_finished
  `.execute(context.db);
  return { computed: rows.length > 0, recountFinished: rows[0]?.recount_finished ?? false };
}
