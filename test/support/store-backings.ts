import { MemoryTaskStore, type TaskNode, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { listeningNode } from './listening-node.js';
import { createTestDatabase } from './database.js';

/** A real store for one test file, and how to release it. */
export interface StoreBacking {
  readonly store: TaskStore;
  /** The node that delivers a shared store's events (none for the memory store: it has its own). */
  readonly node?: TaskNode;
  close(): Promise<void>;
}

/**
 * Both shipped stores, for runtime behaviour that must not depend on the store: the in-memory
 * one and PostgreSQL on a database of the file's own, with a listening node beside it.
 */
export const STORE_BACKINGS: Record<string, () => Promise<StoreBacking>> = {
  MemoryTaskStore: async () => {
    const store = new MemoryTaskStore();
    return { store, close: () => store.close() };
  },
  PostgresTaskStore: async () => {
    const database = await createTestDatabase();
    const store = await PostgresTaskStore.connect({ connectionString: database.url });
    const node = await listeningNode(store, { rescuer: false });
    return {
      store,
      node,
      close: async () => {
        await node.stop();
        await store.close();
        await database.drop();
      },
    };
  },
};
