import type { RunClaim, TaskRecord, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookManyInPlace, type TaskPlace } from '../schema/task-place.js';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { Settled } from '../writes/write-batcher.js';
import { notifyFollowers } from './notify-followers.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** One progress write of a batch: what `setStatusMessage()` takes. */
export interface StatusMessageWrite {
  readonly ref: TaskRef;
  readonly statusMessage: string;
  readonly claim: RunClaim | undefined;
}

/**
 * `setStatusMessage()` for several tasks in one statement and so one commit, each row
 * compare-and-set on its own live status and claim: a task that ended or that its run no longer
 * holds settles its own write with `undefined`. The batch holds one write per task (the batcher's
 * key), so one task's messages are written in the order they were asked.
 * It looks in the span of the ids' places first; the writes that found nothing there go again,
 * everywhere, as a second statement of their own (`lookManyInPlace`).
 */
export async function setStatusMessages(context: SqlContext, writes: readonly StatusMessageWrite[]): Promise<Settled<TaskRecord | undefined>[]> {
  return lookManyInPlace(
    writes,
    ({ ref }) => ref.taskId,
    (some, place) => setStatusMessagesIn(context, some, place),
    (settled) => 'value' in settled && settled.value === undefined,
  );
}

async function setStatusMessagesIn(context: SqlContext, writes: readonly StatusMessageWrite[], place: TaskPlace): Promise<Settled<TaskRecord | undefined>[]> {
  const column = <T>(of: (write: StatusMessageWrite) => T): T[] => writes.map(of);
  const rows = await preparedRows(
    context,
    'set_status_messages',
    sql<TaskRow & { in_n: string }>`
    WITH input AS (
      SELECT *
        FROM unnest(
          ${column(({ ref }) => ref.taskId)}::text[], ${column(({ ref }) => ownerKey(ref.owner))}::text[], ${column(({ statusMessage }) => statusMessage)}::text[],
          ${column(({ claim }) => claim?.nodeId ?? null)}::text[], ${column(({ claim }) => claim?.attempt ?? null)}::integer[]
        ) WITH ORDINALITY AS i(in_id, in_owner_key, in_status_message, in_claim_node, in_claim_attempt, in_n)
    )
    UPDATE ${context.tasks}
       SET status_message = in_status_message,
           last_updated_at = ${touchedAt}
      FROM input
     WHERE id = in_id AND ${inPlace(place)} AND owner_key = in_owner_key AND (expires_at IS NULL OR expires_at > now()) AND ${isLive}
       AND (in_claim_node IS NULL OR (node_id = in_claim_node AND attempt = in_claim_attempt))
    RETURNING ${context.tasks}.*, in_n, ${notifyFollowers(context.channel)}
  `,
  );
  const settled: Settled<TaskRecord | undefined>[] = writes.map(() => ({ value: undefined }));
  for (const row of rows) settled[Number(row.in_n) - 1] = { value: toTaskRecord(row) };
  return settled;
}
