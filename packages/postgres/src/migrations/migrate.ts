import type pg from 'pg';
import { assertSchemaName } from '../schema/schema-name.js';
import { loadMigrations, type Migration } from './migration-files.js';
import { createMigrationsTableSql, migrationLockKey } from './migrations-table.js';

/** What {@link migrate} did. */
export interface MigrateResult {
  /** File names applied now, in order. Empty when the schema was up to date. */
  readonly applied: readonly string[];
}

/**
 * Applies pending migrations to `schema`, in one transaction under a per-schema advisory lock
 * (tried again, up to 5 times, when a file's lock_timeout runs out):
 * nodes starting together queue on the lock, and each re-reads what is applied once it holds it,
 * so every file runs exactly once. Files run with `search_path` set to the schema, which is how
 * one set of files serves any schema name.
 */
export async function migrate(pool: pg.Pool, schema: string, migrations?: readonly Migration[]): Promise<MigrateResult> {
  assertSchemaName(schema);
  const files = migrations ?? (await loadMigrations());
  // A file that waits for a table's lock at most a lock_timeout (migration 0030, before the
  // partitioned table's cut-over) gives up behind a long transaction rather than queueing every
  // request behind itself; the whole transaction is rolled back and tried again a moment later.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await applyPending(pool, schema, files);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== LOCK_NOT_AVAILABLE || attempt >= LOCK_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.round(250 * attempt * (0.5 + Math.random()))));
    }
  }
}

/** SQLSTATE lock_not_available: a lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';
/** Tries of the migration transaction whose lock_timeout ran out. */
const LOCK_ATTEMPTS = 5;

async function applyPending(pool: pg.Pool, schema: string, files: readonly Migration[]): Promise<MigrateResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [migrationLockKey(schema)]);
      const id = client.escapeIdentifier(schema);
      // Under the lock: concurrent CREATE SCHEMA IF NOT EXISTS can otherwise fail on a unique violation.
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${id}`);
      await client.query(createMigrationsTableSql(id));
      const done = await client.query<{ version: number }>(`SELECT version FROM ${id}.schema_migrations`);
      const appliedVersions = new Set(done.rows.map((row) => row.version));
      const applied: string[] = [];
      for (const migration of files) {
        if (appliedVersions.has(migration.version)) continue;
        await client.query(`SELECT set_config('search_path', $1, true)`, [id]);
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${id}.schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
        applied.push(migration.name);
      }
      await client.query('COMMIT');
      return { applied };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}
