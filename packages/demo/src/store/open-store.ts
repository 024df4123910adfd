import { randomUUID } from 'node:crypto';
import { MemoryTaskStore, type TaskNode, type TaskStore } from '@mcp-tasks/core';

/** Cluster settings of the PostgreSQL store. */
export interface OpenStoreOptions {
  /** The node's id (`NODE_ID`); default: a random one, so every process holds a lease of its own. */
  readonly nodeId?: string | undefined;
  /** The node lease (`MCP_TASKS_LEASE_MS`); default 30 000. */
  readonly leaseMs?: number | undefined;
}

/** A demo node's tasks: where they live, and the cluster node beside a shared store. */
export interface OpenedStore {
  readonly store: TaskStore;
  readonly node?: TaskNode;
}

/**
 * The demo's store: a `MemoryTaskStore` without `databaseUrl`; otherwise a `PostgresTaskStore`
 * with pending migrations applied at start and a `PostgresTaskNode` beside it holding a lease, so
 * the tasks of a node that dies are failed by another node's lease reaper.
 */
export async function openStore(databaseUrl: string | undefined, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  if (!databaseUrl) return { store: new MemoryTaskStore() };
  // Loaded only when needed, so the memory-only demo does not load pg.
  const { PostgresTaskNode, PostgresTaskStore } = await import('@mcp-tasks/postgres');
  const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, migrate: true });
  try {
    const node = await PostgresTaskNode.start(store, {
      nodeId: options.nodeId ?? `node-${randomUUID()}`,
      ...(options.leaseMs === undefined ? {} : { lease: { leaseMs: options.leaseMs } }),
    });
    return { store, node };
  } catch (error) {
    await store.close();
    throw error;
  }
}
