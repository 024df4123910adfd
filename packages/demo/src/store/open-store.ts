import { MemoryTaskStore, type TaskStore } from '@mcp-tasks/core';

/**
 * The demo's store: a `MemoryTaskStore` without `databaseUrl`, otherwise a `PostgresTaskStore`
 * with migrations applied at start.
 */
export async function openStore(databaseUrl: string | undefined): Promise<TaskStore> {
  if (!databaseUrl) return new MemoryTaskStore();
  // Loaded only when needed, so the memory-only demo does not touch pg.
  const postgres = (await import('@mcp-tasks/postgres')) as Record<string, unknown>;
  const PostgresTaskStore = postgres['PostgresTaskStore'] as
    | { connect(options: { connectionString: string; migrate: boolean }): Promise<TaskStore> }
    | undefined;
  if (!PostgresTaskStore) throw new Error('DATABASE_URL is set but @mcp-tasks/postgres has no PostgresTaskStore yet');
  return PostgresTaskStore.connect({ connectionString: databaseUrl, migrate: true });
}
