import { MemoryTaskStore, type TaskStore } from '@mcp-tasks/core';

/**
 * The demo's store: a `MemoryTaskStore` without `databaseUrl`, otherwise a `PostgresTaskStore`
 * with pending migrations applied at start.
 */
export async function openStore(databaseUrl: string | undefined): Promise<TaskStore> {
  if (!databaseUrl) return new MemoryTaskStore();
  // Loaded only when needed, so the memory-only demo does not load pg.
  const { PostgresTaskStore } = await import('@mcp-tasks/postgres');
  return PostgresTaskStore.connect({ connectionString: databaseUrl, migrate: true });
}
