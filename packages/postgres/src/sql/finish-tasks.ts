import type { RunClaim, TaskOutcome, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { normaliseStatusMessage, outcomeChargeOf, ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookManyInPlace, type TaskPlace } from '../schema/task-place.js';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { Settled } from '../writes/write-batcher.js';
import { notifyFollowers } from './notify-followers.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** One finish of a batch: what `finishTask()` takes. */
export interface FinishWrite {
  readonly ref: TaskRef;
  readonly outcome: TaskOutcome;
  readonly claim: RunClaim | undefined;
}

/**
 * `finishTask()` for several tasks in one statement and so one commit: each row compare-and-set
 * on its own live status and claim, so a task that already ended (a cancel won) or that its run no
 * longer holds settles its own finish with `undefined` and the others still commit. The batch
 * holds one finish per task (the batcher's key). The storage charges of large outcomes are summed
 * per counter row and written in one order, so two batches charging the same rows wait for each
 * other instead of deadlocking, and no counter row is written twice in one statement.
 * It looks in the span of the ids' places first; the writes that found nothing there go again,
 * everywhere, as a second statement of their own (`lookManyInPlace`).
 */
export async function finishTasks(context: SqlContext, writes: readonly FinishWrite[]): Promise<Settled<TaskRecord | undefined>[]> {
  return lookManyInPlace(
    writes,
    ({ ref }) => ref.taskId,
    (some, place) => finishTasksIn(context, some, place),
    (settled) => 'value' in settled && settled.value === undefined,
  );
}

async function finishTasksIn(context: SqlContext, writes: readonly FinishWrite[], place: TaskPlace): Promise<Settled<TaskRecord | undefined>[]> {
  const column = <T>(of: (write: FinishWrite) => T): T[] => writes.map(of);
  const rows = await preparedRows(
    context,
    'finish_tasks',
    sql<TaskRow & { in_n: string }>`
    WITH input AS (
      SELECT *
        FROM unnest(
          ${column(({ ref }) => ref.taskId)}::text[], ${column(({ ref }) => ownerKey(ref.owner))}::text[], ${column(({ outcome }) => outcome.status)}::text[],
          ${column(({ outcome }) => (outcome.status === 'completed' ? JSON.stringify(outcome.result) : null))}::jsonb[],
          ${column(({ outcome }) => (outcome.status === 'failed' ? JSON.stringify(outcome.error) : null))}::jsonb[],
          ${column(({ outcome }) => outcome.status === 'failed')}::boolean[],
          ${column(({ outcome }) => (outcome.status === 'failed' ? normaliseStatusMessage(outcome.statusMessage) : null))}::text[],
          ${column(({ claim }) => claim?.nodeId ?? null)}::text[], ${column(({ claim }) => claim?.attempt ?? null)}::integer[],
          ${column(({ outcome }) => outcomeChargeOf(outcome))}::bigint[]
        ) WITH ORDINALITY AS i(in_id, in_owner_key, in_status, in_result, in_error, in_replaces_message, in_status_message, in_claim_node, in_claim_attempt, in_charge, in_n)
    ), finished AS (
      UPDATE ${context.tasks}
         SET status = in_status,
             result = in_result,
             error = in_error,
             -- A failure replaces the status message; a completion keeps the last progress message.
             status_message = CASE WHEN in_replaces_message THEN in_status_message ELSE status_message END,
             last_updated_at = ${touchedAt}
        FROM input
       WHERE id = in_id AND ${inPlace(place)} AND owner_key = in_owner_key AND (expires_at IS NULL OR expires_at > now()) AND ${isLive}
         AND (in_claim_node IS NULL OR (node_id = in_claim_node AND attempt = in_claim_attempt))
      RETURNING ${context.tasks}.*, in_n, in_charge, ${notifyFollowers(context.channel)}
    ), charged AS (
      INSERT INTO ${context.storage} (storage_key, expires_by, shard, bytes)
      SELECT storage_key, expires_by, shard, sum(in_charge)
        FROM (SELECT CASE storage_pool WHEN 'shared' THEN '*' ELSE owner_key END AS storage_key, ${context.storageBucket}(expires_at) AS expires_by,
                     CASE storage_pool WHEN 'shared' THEN floor(random() * 8)::smallint ELSE 0 END AS shard, in_charge
                FROM finished
               WHERE storage_pool IS NOT NULL AND in_charge > 0) AS charges
       GROUP BY storage_key, expires_by, shard
       ORDER BY storage_key, expires_by, shard
      ON CONFLICT (storage_key, expires_by, shard) DO UPDATE SET bytes = ${context.storage}.bytes + EXCLUDED.bytes
    )
    SELECT * FROM finished
  `,
  );
  const settled: Settled<TaskRecord | undefined>[] = writes.map(() => ({ value: undefined }));
  for (const row of rows) settled[Number(row.in_n) - 1] = { value: toTaskRecord(row) };
  return settled;
}
