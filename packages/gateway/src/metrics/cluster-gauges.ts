import { metrics, type MeterProvider } from '@opentelemetry/api';
import { countsByStatus, type ClusterStats } from '@mcp-tasks/postgres';

/**
 * The cluster-wide gauges: tasks by status across the cluster (`mcp_tasks_cluster_tasks`) and
 * the oldest live task's age (`mcp_tasks_cluster_oldest_live_task_age_seconds`, and per tool
 * `mcp_tasks_oldest_live_task_age_seconds{gen_ai_tool_name}`), from the counts
 * the maintenance leader last wrote, as this node last read them (no query per scrape). Every
 * node exports the same values with `scope="cluster"`, so a scrape survives any node's death;
 * aggregate them with `max by (status)`, never `sum` (which would count each task once per node).
 * Nothing but the node's tools at 0 is exported before the first counts are read.
 */
export function observeClusterGauges(stats: () => ClusterStats | undefined, meterProvider: MeterProvider | undefined, toolNames: readonly string[] = []): void {
  const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/demo');
  const tasks = meter.createObservableGauge('mcp_tasks.cluster.tasks', { description: 'Unexpired tasks in the whole cluster by status (the same on every node: aggregate with max, not sum)' });
  const oldest = meter.createObservableGauge('mcp_tasks.cluster.oldest_live_task_age_seconds', {
    description: 'Age of the oldest working or input_required task in the whole cluster (the same on every node: aggregate with max, not sum)',
  });
  const unclaimed = meter.createObservableGauge('mcp_tasks.cluster.unclaimed_tasks', {
    description: 'Working tasks no node runs: queued beyond every node\'s capacity, or released and waiting for a claim (the same on every node: aggregate with max)',
  });
  // Per tool, so each alert can hold a tool to its own expected time; the node's tools are at 0
  // from its start (no live task), any other tool with a live task appears beside them.
  const oldestByTool = meter.createObservableGauge('mcp_tasks.oldest_live_task_age_seconds', {
    description: 'Age of the oldest working or input_required task of each tool in the whole cluster, 0 when it has none (the same on every node: aggregate with max)',
  });
  meter.addBatchObservableCallback(
    (observer) => {
      const latest = stats();
      const byTool = new Map<string, number>(toolNames.map((tool) => [tool, 0]));
      for (const [tool, ms] of latest?.oldestLiveAgeMsByTool ?? []) byTool.set(tool, ms / 1000);
      for (const [tool, seconds] of byTool) observer.observe(oldestByTool, seconds, { scope: 'cluster', 'gen_ai.tool.name': tool });
      if (!latest) return;
      for (const [status, count] of Object.entries(countsByStatus(latest))) observer.observe(tasks, count, { scope: 'cluster', status });
      observer.observe(oldest, latest.oldestLiveAgeMs === null ? 0 : latest.oldestLiveAgeMs / 1000, { scope: 'cluster' });
      const waiting = latest.counts.filter((count) => count.nodeId === null && count.status === 'working').reduce((sum, count) => sum + count.count, 0);
      observer.observe(unclaimed, waiting, { scope: 'cluster' });
    },
    [tasks, oldest, unclaimed, oldestByTool],
  );
}
