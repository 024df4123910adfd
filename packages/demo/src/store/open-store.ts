import { randomUUID } from 'node:crypto';
import { MemoryTaskStore, type TaskStore } from '@mcp-tasks/core';

/** Cluster settings of the PostgreSQL store. */
export interface OpenStoreOptions {
  /** The node's id (`NODE_ID`); default: a random one, so every process holds a lease of its own. */
  readonly nodeId?: string | undefined;
  /** The node lease (`MCP_TASKS_LEASE_MS`); default 30 000. */
  readonly leaseMs?: number | undefined;
}

/**
 * The demo's store: a `MemoryTaskStore` without `databaseUrl`, otherwise a `PostgresTaskStore`
 * with pending migrations applied at start and a node lease (the runtime takes the store's
 * `nodeId`), so the tasks of a node that dies are failed by another node's lease reaper.
 */
export async function openStore(databaseUrl: string | undefined, options: OpenStoreOptions = {}): Promise<TaskStore> {
  if (!databaseUrl) return new MemoryTaskStore();
  // Loaded only when needed, so the memory-only demo does not load pg.
  const { PostgresTaskStore } = await import('@mcp-tasks/postgres');
  return PostgresTaskStore.connect({
    connectionString: databaseUrl,
    migrate: true,
    nodeId: options.nodeId ?? `node-${randomUUID()}`,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
}
