import { sql } from 'kysely';
import type { ClusterStats, ClusterTaskCount } from '../stats/cluster-stats.js';
import { toTaskStatus } from '../schema/task-row.js';
import type { SqlContext } from './sql-context.js';

/** The `cluster_stats` row as the leader last wrote it; `undefined` before any leader has. */
export async function readClusterStats(context: SqlContext): Promise<ClusterStats | undefined> {
  const { rows } = await sql<{
    computed_at: Date;
    computed_by: string;
    counts: { nodeId: string | null; status: string; count: number }[];
    oldest_live_age_ms: string | null;
    by_tool: Record<string, string> | null;
  }>`
    SELECT computed_at, computed_by, counts,
           floor(extract(epoch FROM now() - oldest_live_created_at) * 1000)::bigint AS oldest_live_age_ms,
           -- Only when this round wrote it (a node of the previous release leaves it as it was).
           (SELECT jsonb_object_agg(t.key, floor(extract(epoch FROM now() - (t.value #>> '{}')::timestamptz) * 1000)::bigint)
              FROM jsonb_each(oldest_live_by_tool -> 'tools') t
             WHERE (oldest_live_by_tool ->> 'computedAt')::timestamptz = computed_at) AS by_tool
      FROM ${context.clusterStats}
  `.execute(context.db);
  const row = rows[0];
  if (!row) return undefined;
  const counts: ClusterTaskCount[] = row.counts.map((count) => ({ nodeId: count.nodeId, status: toTaskStatus(count.status), count: Number(count.count) }));
  const oldestLiveAgeMsByTool = new Map(Object.entries(row.by_tool ?? {}).map(([tool, ms]) => [tool, Number(ms)]));
  return {
    computedAt: row.computed_at,
    computedBy: row.computed_by,
    counts,
    oldestLiveAgeMs: row.oldest_live_age_ms === null ? null : Number(row.oldest_live_age_ms),
    oldestLiveAgeMsByTool,
  };
}
