import { assertSchemaName } from '../schema/schema-name.js';
import type { Migration } from './migration-files.js';
import { createMigrationsTableSql, migrationLockKey } from './migrations-table.js';

/**
 * The SQL {@link migrate} would run for `migrations` on `schema`, as one script for psql: one
 * transaction under the runner's advisory lock, each file with `search_path` set to the schema and
 * recorded in `schema_migrations`, so a later `migrate` sees it applied. For review, or for
 * databases where the application's role may not run DDL.
 */
export function migrationScript(schema: string, migrations: readonly Migration[]): string {
  assertSchemaName(schema);
  const id = `"${schema}"`;
  const parts = [
    `-- mcp-tasks migrations for schema ${schema}: ${migrations.length === 0 ? 'none pending' : migrations.map((m) => m.name).join(', ')}`,
    'BEGIN;',
    `SELECT pg_advisory_xact_lock(hashtextextended('${migrationLockKey(schema)}', 0));`,
    `CREATE SCHEMA IF NOT EXISTS ${id};`,
    `${createMigrationsTableSql(id)};`,
  ];
  for (const migration of migrations) {
    parts.push(
      `\n-- ${migration.name}`,
      `SET LOCAL search_path TO ${id};`,
      migration.sql.trimEnd(),
      `INSERT INTO ${id}.schema_migrations (version, name) VALUES (${Number(migration.version)}, '${migration.name.replaceAll("'", "''")}');`,
    );
  }
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}
