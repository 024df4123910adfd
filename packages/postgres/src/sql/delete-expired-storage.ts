import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Deletes the storage counter rows whose minute has passed (migration 0012): the bound's check
 * already ignores them, so this only keeps the table small (one row per pool and minute of the
 * TTL, up to eight for the shared pool). Owners that stopped creating leave rows only this removes.
 */
export async function deleteExpiredStorage(context: SqlContext, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM ${context.storage}
     WHERE ctid = ANY (ARRAY (SELECT ctid FROM ${context.storage} WHERE expires_by <= now() LIMIT ${limit} FOR UPDATE SKIP LOCKED))
       AND expires_by <= now()
  `.execute(context.db);
  return Number(result.numAffectedRows ?? 0);
}
