import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Deletes up to `limit` expired tasks by primary key, oldest expiry first, in one short
 * statement. SKIP LOCKED steps around rows a writer holds instead of waiting on them.
 */
export async function deleteExpiredTasks(context: SqlContext, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM ${context.tasks}
     WHERE id IN (SELECT id FROM ${context.tasks}
                   WHERE expires_at <= now()
                   ORDER BY expires_at
                   LIMIT ${limit}
                     FOR UPDATE SKIP LOCKED)
  `.execute(context.db);
  return Number(result.numAffectedRows ?? 0n);
}
