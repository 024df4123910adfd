import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Detaches and drops the hourly partition `partition` (of `tasks`, `task_steps` or `task_events`)
 * if its hour has ended, through `drop_task_partition()` (migrations 0032, 0035), waiting at most
 * `lockTimeoutMs` for the moment of exclusive lock on its parent the detach takes (set for the
 * caller's transaction, which must be the drop's own) (readers queue behind a waiting detach, so
 * this bounds their wait too); past it the statement fails with SQLSTATE 55P03 and changes
 * nothing. False when it was not dropped (not an ended hour's partition, or gone already).
 */
export async function dropTaskPartition(context: SqlContext, partition: string, lockTimeoutMs: number): Promise<boolean> {
  await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(context.db);
  const { rows } = await sql<{ dropped: boolean }>`
    SELECT ${sql.id(context.schema, 'drop_task_partition')}(${partition}) AS dropped
  `.execute(context.db);
  return rows[0]?.dropped ?? false;
}
