/**
 * The bookkeeping of the runner, shared by {@link migrate} and {@link migrationScript} so the
 * script an operator applies by hand records exactly what the runner would. `id` is the schema as
 * a quoted identifier.
 */
export function createMigrationsTableSql(id: string): string {
  return `CREATE TABLE IF NOT EXISTS ${id}.schema_migrations (
  version    integer     PRIMARY KEY,
  name       text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** The advisory lock key that serialises runners on one schema. */
export function migrationLockKey(schema: string): string {
  return `mcp-tasks:migrate:${schema}`;
}
