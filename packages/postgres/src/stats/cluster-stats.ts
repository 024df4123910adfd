import type { TaskStatus } from '@mcp-tasks/core';

/** How many unexpired tasks one node holds in one status (`nodeId` null: held by no run). */
export interface ClusterTaskCount {
  readonly nodeId: string | null;
  readonly status: TaskStatus;
  readonly count: number;
}

/** The cluster's counts as the maintenance leader last computed them (the `cluster_stats` row). */
export interface ClusterStats {
  readonly computedAt: Date;
  /** The node that computed them. */
  readonly computedBy: string;
  readonly counts: readonly ClusterTaskCount[];
  /**
   * The age of the oldest task that was live and unexpired when they were computed, as of this
   * read (ms, database clock); null when none was live.
   */
  readonly oldestLiveAgeMs: number | null;
  /** The same age per tool, for the tools with a live task (empty when a node of the previous release computed them). */
  readonly oldestLiveAgeMsByTool: ReadonlyMap<string, number>;
}

/** The counts summed over nodes, one entry per status (every status present, 0 when none). */
export function countsByStatus(stats: ClusterStats | undefined): Record<TaskStatus, number> {
  const totals: Record<TaskStatus, number> = { working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const { status, count } of stats?.counts ?? []) totals[status] += count;
  return totals;
}
