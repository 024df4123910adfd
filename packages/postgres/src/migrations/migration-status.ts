import type pg from 'pg';
import { assertSchemaName } from '../schema/schema-name.js';
import { loadMigrations, type Migration } from './migration-files.js';

/** A migration recorded in `<schema>.schema_migrations`. */
export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: Date;
}

/** What {@link migrationStatus} found. */
export interface MigrationStatus {
  /** Recorded migrations this release knows, by version. */
  readonly applied: readonly AppliedMigration[];
  /** Migrations of this release not recorded yet, in the order `migrate` would apply them. */
  readonly pending: readonly Migration[];
  /**
   * Recorded migrations this release does not know: the database was migrated by a newer
   * release, and this one may not understand its tables.
   */
  readonly unknown: readonly AppliedMigration[];
}

/** Compares what `schema` has applied with this release's migrations. Reads only; takes no lock. */
export async function migrationStatus(pool: pg.Pool, schema: string, migrations?: readonly Migration[]): Promise<MigrationStatus> {
  assertSchemaName(schema);
  const files = migrations ?? (await loadMigrations());
  const exists = await pool.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [`"${schema}".schema_migrations`]);
  const rows =
    exists.rows[0]?.found == null
      ? []
      : (
          await pool.query<{ version: number; name: string; applied_at: Date }>(
            `SELECT version, name, applied_at FROM "${schema}".schema_migrations ORDER BY version`,
          )
        ).rows;
  const known = new Set(files.map((file) => file.version));
  const recorded = rows.map((row) => ({ version: row.version, name: row.name, appliedAt: row.applied_at }));
  const appliedVersions = new Set(recorded.map((row) => row.version));
  return {
    applied: recorded.filter((row) => known.has(row.version)),
    pending: files.filter((file) => !appliedVersions.has(file.version)),
    unknown: recorded.filter((row) => !known.has(row.version)),
  };
}
