import { sql } from 'kysely';
import type { TaskPartition } from './list-expired-task-partitions.js';
import type { SqlContext } from './sql-context.js';

/** What one batch deleted, and where the next one starts. */
export interface DeletedPartitionChildren {
  /** Tasks of the partition whose steps and events this batch deleted. */
  readonly tasks: number;
  /** The last task id of the batch (absent when it found none): the next batch starts after it. */
  readonly lastId: string | undefined;
}

/**
 * Deletes the steps and events of up to `limit` tasks of the hourly partition `partition`, in id
 * order after `after`, by the partition's key and the first column of the steps' and events' keys.
 * The tasks are read through `tasks` with the partition's range, which the plan prunes to that
 * partition: a node's role may read the table, not necessarily each partition.
 * Dropping a partition removes its tasks but not what hangs off them in the unpartitioned
 * task_steps and task_events (their foreign keys' cascade went with migration 0032), so the sweeper
 * runs this to the end before it drops the partition. Its tasks have all expired, so no write adds
 * to them meanwhile (every write is guarded by the task's expiry).
 * The ids go to the deletes as an array (`= ANY`), not a join: a join's plan follows the events'
 * statistics, and on an events table grown since its last ANALYZE (bench scenario 23: 12 million
 * rows, analyzed when nearly empty) it was a hash join over a sequential scan of every event, half a
 * second a batch; the array is probed through the key's index whatever the statistics say.
 */
export async function deleteTaskPartitionChildren(context: SqlContext, partition: TaskPartition, limit: number, after?: string): Promise<DeletedPartitionChildren> {
  const { rows } = await sql<{ tasks: number; last_id: string | null }>`
    WITH batch AS (
      SELECT id FROM ${context.tasks}
       WHERE expiry_key >= ${partition.from}::timestamptz AND expiry_key < ${partition.until}::timestamptz
         AND id > ${after ?? ''}
       ORDER BY id
       LIMIT ${limit}
    ), steps AS (
      DELETE FROM ${context.steps} WHERE task_id = ANY (ARRAY(SELECT id FROM batch))
    ), events AS (
      DELETE FROM ${context.events} WHERE task_id = ANY (ARRAY(SELECT id FROM batch))
    )
    SELECT count(*)::int AS tasks, max(id) AS last_id FROM batch
  `.execute(context.db);
  const row = rows[0];
  return { tasks: row?.tasks ?? 0, lastId: row?.last_id ?? undefined };
}
