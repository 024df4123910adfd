import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/** An hourly partition of `tasks`: its name and its range of `expiry_key`, [from, until). */
export interface TaskPartition {
  readonly name: string;
  readonly from: Date;
  readonly until: Date;
}

/**
 * The hourly partitions of `tasks` whose hour has ended (every row in them has expired), oldest
 * first. Their names are `tasks_pYYYYMMDDHH`, the hour they start at in UTC (migration 0032).
 */
export async function listExpiredTaskPartitions(context: SqlContext): Promise<TaskPartition[]> {
  const { rows } = await sql<TaskPartition>`
    SELECT name, hour AS "from", hour + interval '1 hour' AS until
      FROM (SELECT c.relname AS name, to_timestamp(substr(c.relname, 8) || '+00', 'YYYYMMDDHH24TZH') AS hour
      FROM pg_inherits AS i
      JOIN pg_class AS c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass(${`${quoteIdent(context.schema)}.tasks`})
       AND c.relname ~ '^tasks_p[0-9]{10}$') AS partitions
     WHERE hour + interval '1 hour' <= now()
     ORDER BY hour
  `.execute(context.db);
  return rows;
}

/** A schema name (a plain lower-case identifier, checked at connect) as regclass input reads it. */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
