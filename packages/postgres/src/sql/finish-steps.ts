import type { JsonValue } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookManyInPlace, type TaskPlace } from '../schema/task-place.js';
import type { Settled } from '../writes/write-batcher.js';
import type { StepWrite } from './begin-steps.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** One step result of a batch: what `finishStep()` takes. */
export interface StepResultWrite extends StepWrite {
  readonly result: JsonValue;
}

/**
 * `finishStep()` for the steps of several tasks in one statement and so one commit, each
 * compare-and-set on its own claim.
 * It looks in the span of the ids' places first; the writes that found nothing there go again,
 * everywhere, as a second statement of their own (`lookManyInPlace`).
 */
export async function finishSteps(context: SqlContext, writes: readonly StepResultWrite[]): Promise<Settled<boolean>[]> {
  return lookManyInPlace(
    writes,
    ({ ref }) => ref.taskId,
    (some, place) => finishStepsIn(context, some, place),
    (settled) => 'value' in settled && !settled.value,
  );
}

async function finishStepsIn(context: SqlContext, writes: readonly StepResultWrite[], place: TaskPlace): Promise<Settled<boolean>[]> {
  const column = <T>(of: (write: StepResultWrite) => T): T[] => writes.map(of);
  const rows = await preparedRows(
    context,
    'finish_steps',
    sql<{ in_n: string }>`
    WITH input AS (
      SELECT *
        FROM unnest(
          ${column(({ ref }) => ref.taskId)}::text[], ${column(({ ref }) => ownerKey(ref.owner))}::text[], ${column(({ name }) => name)}::text[],
          ${column(({ result }) => JSON.stringify(result))}::jsonb[],
          ${column(({ claim }) => claim.nodeId)}::text[], ${column(({ claim }) => claim.attempt)}::integer[]
        ) WITH ORDINALITY AS i(in_id, in_owner_key, in_name, in_result, in_claim_node, in_claim_attempt, in_n)
    )
    UPDATE ${context.steps} AS s
       SET done = true, result = in_result
      FROM ${context.tasks} AS t, input
     WHERE s.task_id = t.id AND s.expiry_key = t.expiry_key AND s.name = in_name
       AND ${inPlace(place, sql.ref('s.expiry_key'))} AND ${inPlace(place, sql.ref('t.expiry_key'))}
       AND t.id = in_id AND t.owner_key = in_owner_key AND (t.expires_at IS NULL OR t.expires_at > now())
       AND t.status IN ('working', 'input_required') AND t.node_id = in_claim_node AND t.attempt = in_claim_attempt
    RETURNING in_n
  `,
  );
  const settled: Settled<boolean>[] = writes.map(() => ({ value: false }));
  for (const row of rows) settled[Number(row.in_n) - 1] = { value: true };
  return settled;
}
