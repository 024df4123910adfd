import { metrics, type MeterProvider } from '@opentelemetry/api';
import type { PoolStats, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';

/** A node's PostgreSQL side, as `openStore` opened it. */
export interface NodeGaugeSources {
  readonly store: PostgresTaskStore;
  readonly node: PostgresTaskNode;
  readonly poolStats: () => PoolStats;
}

/** How often the node checks that PostgreSQL answers, for `mcp_tasks_postgres_reachable`. */
const PING_INTERVAL_MS = 5_000;
const PING_TIMEOUT_MS = 2_000;

/**
 * What one node's alerts and dashboard read of its PostgreSQL side, each from the node's start and
 * labelled with its id (`mcp_tasks.node.id`): whether LISTEN works, its lease's age and losses, what
 * its reaper and sweeper did, its pool, and whether PostgreSQL answers. Read at scrape time from
 * the services' own state (no query per scrape; the reachability comes from a ping every 5 s).
 * Returns what stops the ping.
 */
export function observeNodeGauges({ store, node, poolStats }: NodeGaugeSources, meterProvider: MeterProvider | undefined): () => void {
  const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/demo');
  const attributes = { 'mcp_tasks.node.id': node.nodeId };
  const listening = meter.createObservableGauge('mcp_tasks.listener.listening', { description: '1 while the control listener LISTENs, 0 while the node relies on polling (or reconnects)' });
  const leaseAge = meter.createObservableGauge('mcp_tasks.lease.age_seconds', { description: "Time since this node's lease was last renewed", unit: 's' });
  const leaseLosses = meter.createObservableCounter('mcp_tasks.lease.losses', { description: 'Leases this node lost (each failed its live tasks)' });
  const reaped = meter.createObservableCounter('mcp_tasks.lease.reaped', { description: "Tasks this node's reaper failed because their node's lease expired" });
  const swept = meter.createObservableCounter('mcp_tasks.sweeper.deleted', { description: "Expired tasks this node's sweeper deleted" });
  const partitionsDropped = meter.createObservableCounter('mcp_tasks.sweeper.partitions_dropped', { description: "Ended hourly partitions of tasks this node's sweeper dropped" });
  const sweptAt = meter.createObservableGauge('mcp_tasks.sweeper.last_run_timestamp_seconds', { description: 'When this node last ran a sweep round as the leader (Unix time; 0: never)', unit: 's' });
  const pool = meter.createObservableGauge('mcp_tasks.pool.connections', { description: "The store pool's connections, by state (idle, active, and queries waiting for one)" });
  const wakeups = meter.createObservableCounter('mcp_tasks.control.received', { description: 'Control messages (cancels, answers, changes, claimable tasks) this node received over LISTEN' });
  const ignoredWakeups = meter.createObservableCounter('mcp_tasks.control.ignored', { description: 'Received control messages about a task this node neither runs nor follows' });
  const reachable = meter.createObservableGauge('mcp_tasks.postgres.reachable', { description: '1 when PostgreSQL answered the last ping (every 5 s), else 0' });
  let answered = 1;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const ping = () => {
    store.ping(PING_TIMEOUT_MS).then(
      () => (answered = 1),
      () => (answered = 0),
    ).finally(() => {
      if (!stopped) (timer = setTimeout(ping, PING_INTERVAL_MS)).unref();
    });
  };
  ping();
  meter.addBatchObservableCallback(
    (observer) => {
      observer.observe(listening, node.listener?.state === 'listening' ? 1 : 0, attributes);
      const renewedAt = node.lease?.renewedAt;
      if (renewedAt) observer.observe(leaseAge, (Date.now() - renewedAt.getTime()) / 1000, attributes);
      observer.observe(leaseLosses, node.lease?.losses ?? 0, attributes);
      observer.observe(reaped, node.reaper?.reaped ?? 0, attributes);
      observer.observe(swept, node.sweeper?.deleted ?? 0, attributes);
      observer.observe(partitionsDropped, node.sweeper?.partitionsDropped ?? 0, attributes);
      observer.observe(sweptAt, (node.sweeper?.lastRanAt?.getTime() ?? 0) / 1000, attributes);
      const stats = poolStats();
      observer.observe(pool, stats.idle, { ...attributes, state: 'idle' });
      observer.observe(pool, stats.total - stats.idle, { ...attributes, state: 'active' });
      observer.observe(pool, stats.waiting, { ...attributes, state: 'waiting' });
      observer.observe(reachable, answered, attributes);
      observer.observe(wakeups, node.wakeups.received, attributes);
      observer.observe(ignoredWakeups, node.wakeups.ignored, attributes);
    },
    [listening, leaseAge, leaseLosses, reaped, swept, partitionsDropped, sweptAt, pool, reachable, wakeups, ignoredWakeups],
  );
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
