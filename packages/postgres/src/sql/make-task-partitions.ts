import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Makes the hourly partitions of `tasks` from the current hour (UTC, by the database clock) to
 * `hoursAhead` hours after it, in order, through `make_task_partition()` (migration 0032): each
 * is made empty and attached (a lock that lets reads and writes go on), and the horizon below
 * which creates route rows to hourly partitions moves to the end of the run. Says how many were
 * new; the ones that exist are left as they are.
 */
export async function makeTaskPartitions(context: SqlContext, hoursAhead: number): Promise<number> {
  const { rows } = await sql<{ made: number }>`
    SELECT count(*) FILTER (WHERE made)::int AS made
      FROM (SELECT ${sql.id(context.schema, 'make_task_partition')}(date_trunc('hour', now(), 'UTC') + hour * interval '1 hour') AS made
              FROM generate_series(0, ${hoursAhead}::int) AS hour
             ORDER BY hour) AS partitions
  `.execute(context.db);
  return rows[0]?.made ?? 0;
}
