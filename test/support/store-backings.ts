import { MemoryTaskStore, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskStoreOptions } from '@mcp-tasks/postgres';
import { createTestDatabase } from './database.js';

/** A real store for one test file, and how to release it. */
export interface StoreBacking {
  readonly store: TaskStore;
  close(): Promise<void>;
}

/**
 * Both shipped stores, for runtime behaviour that must not depend on the store: the in-memory
 * one and PostgreSQL on a database of the file's own (`postgres` options go to `connect`).
 */
export const STORE_BACKINGS: Record<string, (postgres?: Partial<PostgresTaskStoreOptions>) => Promise<StoreBacking>> = {
  MemoryTaskStore: async () => {
    const store = new MemoryTaskStore();
    return { store, close: () => store.close() };
  },
  PostgresTaskStore: async (postgres = {}) => {
    const database = await createTestDatabase();
    const store = await PostgresTaskStore.connect({ sweepIntervalMs: 0, ...postgres, connectionString: database.url });
    return {
      store,
      close: async () => {
        await store.close();
        await database.drop();
      },
    };
  },
};
