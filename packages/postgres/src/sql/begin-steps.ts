import type { JsonValue, RunClaim, StepBegin, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookManyInPlace, type TaskPlace } from '../schema/task-place.js';
import { isLive } from '../schema/task-predicates.js';
import type { Settled } from '../writes/write-batcher.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** One step start of a batch: what `beginStep()` takes. */
export interface StepWrite {
  readonly ref: TaskRef;
  readonly claim: RunClaim;
  readonly name: string;
}

/**
 * `beginStep()` for the steps of several tasks in one statement and so one commit, each task
 * compare-and-set on its own claim and share-locked as there. The batch holds one write per task
 * (the batcher's key), so each result row is its task's.
 * It looks in the span of the ids' places first; the writes that found nothing there go again,
 * everywhere, as a second statement of their own (`lookManyInPlace`).
 */
export async function beginSteps(context: SqlContext, writes: readonly StepWrite[]): Promise<Settled<StepBegin>[]> {
  return lookManyInPlace(
    writes,
    ({ ref }) => ref.taskId,
    (some, place) => beginStepsIn(context, some, place),
    (settled) => 'value' in settled && settled.value.state === 'lost',
  );
}

async function beginStepsIn(context: SqlContext, writes: readonly StepWrite[], place: TaskPlace): Promise<Settled<StepBegin>[]> {
  const column = <T>(of: (write: StepWrite) => T): T[] => writes.map(of);
  const rows = await preparedRows(
    context,
    'begin_steps',
    sql<{ task_id: string; starts: number; done: boolean; result: unknown }>`
    WITH input AS (
      SELECT *
        FROM unnest(
          ${column(({ ref }) => ref.taskId)}::text[], ${column(({ ref }) => ownerKey(ref.owner))}::text[], ${column(({ name }) => name)}::text[],
          ${column(({ claim }) => claim.nodeId)}::text[], ${column(({ claim }) => claim.attempt)}::integer[]
        ) AS i(in_id, in_owner_key, in_name, in_claim_node, in_claim_attempt)
    ), held AS (
      SELECT id, expiry_key, in_name
        FROM ${context.tasks} AS t JOIN input ON id = in_id AND owner_key = in_owner_key
       WHERE ${inPlace(place)} AND (expires_at IS NULL OR expires_at > now()) AND ${isLive} AND node_id = in_claim_node AND attempt = in_claim_attempt
         FOR SHARE OF t
    )
    INSERT INTO ${context.steps} AS s (task_id, name, expiry_key)
    SELECT id, in_name, expiry_key FROM held
    ON CONFLICT (task_id, name, expiry_key) DO UPDATE
       SET starts = s.starts + CASE WHEN s.done THEN 0 ELSE 1 END
    RETURNING s.task_id, s.starts, s.done, s.result
  `,
  );
  const byTask = new Map(rows.map((row) => [row.task_id, row]));
  return writes.map(({ ref }): Settled<StepBegin> => {
    const row = byTask.get(ref.taskId);
    if (!row) return { value: { state: 'lost' } };
    return { value: row.done ? { state: 'done', result: (row.result ?? null) as JsonValue } : { state: 'run', starts: row.starts } };
  });
}

