import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/** What one batch of the sweep deleted, and where the next batch of the same sweep starts. */
export interface DeletedExpiredTasks {
  readonly deleted: number;
  /** The latest expiry among the deleted rows (absent when none was deleted). */
  readonly lastExpiresAt: Date | undefined;
}

/**
 * Deletes up to `limit` expired tasks, oldest expiry first, in one short statement, starting at
 * `from` (the previous batch's `lastExpiresAt`; absent for a sweep's first batch).
 *
 * The start bound is what keeps a batch's cost flat through a backlog: the expiry index keeps an
 * entry for every row deleted earlier in the sweep until VACUUM removes it, so a scan from the
 * index's start would step over all of them, a cost that grows with every batch (a million-row
 * backlog: about 2 ms of a 5 ms batch half-way through); the bound descends straight past them.
 * Rows the bound leaves behind (skipped while a writer locked them) are the next sweep's. A Date
 * holds milliseconds and node-postgres truncates the microseconds, so the bound is at or before the
 * real last expiry and never passes a row the previous batch did not reach.
 *
 * The rows are locked (SKIP LOCKED steps around rows a writer holds instead of waiting on them)
 * and deleted by their ctid, so the DELETE goes to the heap tuples the scan found without a
 * primary-key lookup per row; a locked row cannot move, so its ctid stays valid to the end of the
 * statement, and the expiry is checked once more on the row the ctid names all the same, so no
 * ctid can ever delete a live task. (A row updated after the statement began is locked in its new
 * version, which the DELETE's snapshot does not see: it stays for the next sweep.)
 *
 * Only the partition of `expiry_key = 'infinity'` (migration 0032: no TTL, a TTL under an hour,
 * rows of before the partitions): the hourly partitions leave whole (dropExpiredTaskPartition).
 * The condition is a constant, so the plan prunes both scans to that one partition, and a ctid is
 * one partition's own: on the parent unpruned, a ctid of one partition could name a row of another.
 * The statement still targets the parent, whose statement trigger deletes the tasks' steps and
 * events (the foreign keys' cascade before migration 0032).
 */
export async function deleteExpiredTasks(context: SqlContext, limit: number, from?: Date): Promise<DeletedExpiredTasks> {
  const { rows } = await sql<{ deleted: number; last_expires_at: Date | null }>`
    WITH deleted AS (
      DELETE FROM ${context.tasks}
       WHERE expiry_key = 'infinity'
         AND ctid = ANY (ARRAY (SELECT ctid FROM ${context.tasks}
                                 WHERE expiry_key = 'infinity'
                                   AND expires_at <= now() AND expires_at >= ${from ?? '-infinity'}::timestamptz
                                 ORDER BY expires_at
                                 LIMIT ${limit}
                                   FOR UPDATE SKIP LOCKED))
         AND expires_at <= now()
      RETURNING expires_at)
    SELECT count(*)::int AS deleted, max(expires_at) AS last_expires_at FROM deleted
  `.execute(context.db);
  const row = rows[0];
  return { deleted: row?.deleted ?? 0, lastExpiresAt: row?.last_expires_at ?? undefined };
}
