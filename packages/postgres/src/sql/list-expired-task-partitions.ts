import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * The hourly partitions of `tasks` whose hour has ended (every row in them has expired), oldest
 * first. Their names are `tasks_pYYYYMMDDHH`, the hour they start at in UTC (migration 0032).
 */
export async function listExpiredTaskPartitions(context: SqlContext): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name
      FROM pg_inherits AS i
      JOIN pg_class AS c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass(${`${quoteIdent(context.schema)}.tasks`})
       AND c.relname ~ '^tasks_p[0-9]{10}$'
       AND to_timestamp(substr(c.relname, 8) || '+00', 'YYYYMMDDHH24TZH') + interval '1 hour' <= now()
     ORDER BY c.relname
  `.execute(context.db);
  return rows.map((row) => row.name);
}

/** A schema name (a plain lower-case identifier, checked at connect) as regclass input reads it. */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
