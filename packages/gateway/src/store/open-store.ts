import { defaultLogger, MemoryTaskStore, type Logger, type TaskNode, type TaskStore } from '@mcp-tasks/core';
import type { ClusterStats, PostgresOperator } from '@mcp-tasks/postgres';
import type { NodeGaugeSources } from '../metrics/node-gauges.js';
import { postgresReadiness, type ReadinessCheck } from '../http/readiness.js';

/** Cluster settings of the PostgreSQL store. */
export interface OpenStoreOptions {
  /** The node's name (`NODE_ID`); each process adds an instance id to it, so every process holds a lease of its own. Default: `node`. */
  readonly nodeId?: string | undefined;
  /** The node lease (`MCP_TASKS_LEASE_MS`); default 30 000. */
  readonly leaseMs?: number | undefined;
  /** Apply pending migrations at start (`MCP_TASKS_MIGRATE`, default true); off when a one-shot migrate step ran them. */
  readonly migrate?: boolean | undefined;
  /** The direct connection string for the node's session connections and migrations (`DIRECT_DATABASE_URL`). */
  readonly directDatabaseUrl?: string | undefined;
  /** Connections of the store's pool (`MCP_TASKS_POOL_SIZE`). */
  readonly poolSize?: number | undefined;
  /** How often the maintenance leader counts the cluster's tasks (ms); default the library's. */
  readonly clusterStatsMs?: number | undefined;
  /** How often the maintenance leader counts the finished tasks (ms, `false` never); default the library's. */
  readonly clusterFinishedStatsMs?: number | false | undefined;
  /** Where the store and its maintenance services log. Default: `defaultLogger()`. */
  readonly logger?: Logger;
}

/** The store and what its readiness depends on. */
export interface OpenedStore {
  readonly store: TaskStore;
  /** The cluster node beside a shared store. */
  readonly node?: TaskNode;
  readonly readiness: ReadinessCheck;
  /** The cluster's tasks as an operator sees them, on the store's pool (the console's). */
  readonly operator?: PostgresOperator;
  /** The cluster's counts as this node last read them. */
  readonly clusterStats?: () => ClusterStats | undefined;
  /** What the node's own gauges read (lease, listener, reaper, sweeper, pool). */
  readonly gauges?: NodeGaugeSources;
}

/**
 * The demo's store: a `MemoryTaskStore` without `databaseUrl`; otherwise a `PostgresTaskStore`
 * with pending migrations applied at start (unless `migrate` is false) and a `PostgresTaskNode`
 * beside it holding a lease, so the tasks of a node that dies are failed by another node's lease
 * reaper.
 */
export async function openStore(databaseUrl: string | undefined, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const logger = options.logger ?? defaultLogger();
  if (!databaseUrl) return { store: new MemoryTaskStore({ logger }), readiness: async () => undefined };
  // Loaded only when needed, so the memory-only demo does not load pg.
  const { maintenanceLoggerOf, poolStats, PostgresOperator, PostgresTaskNode, PostgresTaskStore } = await import('@mcp-tasks/postgres');
  const store = await PostgresTaskStore.connect({
    connectionString: databaseUrl,
    migrate: options.migrate ?? true,
    logger: maintenanceLoggerOf(logger),
    ...(options.directDatabaseUrl === undefined ? {} : { directConnectionString: options.directDatabaseUrl }),
    ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
  });
  try {
    const node = await PostgresTaskNode.start(store, {
      logger: maintenanceLoggerOf(logger),
      ...(options.nodeId === undefined ? {} : { nodeId: options.nodeId }),
      ...(options.leaseMs === undefined ? {} : { lease: { leaseMs: options.leaseMs } }),
      ...(options.clusterStatsMs === undefined && options.clusterFinishedStatsMs === undefined
        ? {}
        : { stats: { intervalMs: options.clusterStatsMs, finishedIntervalMs: options.clusterFinishedStatsMs } }),
    });
    return { store, node, readiness: postgresReadiness(store, node), operator: PostgresOperator.forStore(store), clusterStats: () => node.stats?.latest, gauges: { store, node, poolStats: () => poolStats(store) } };
  } catch (error) {
    await store.close();
    throw error;
  }
}
