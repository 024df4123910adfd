import type { JsonValue, RunClaim, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { heldBy, isLive, visibleTo } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/** Journals the result of step `name`, compare-and-set on the run's claim; `false` when the claim no longer holds the task. */
export async function finishStep(context: SqlContext, ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean> {
  const finished = await lookInPlace(ref.taskId, async (place) => {
    const { rows } = await sql<{ name: string }>`
      UPDATE ${context.steps} AS s
         SET done = true, result = ${JSON.stringify(result)}::jsonb
        FROM ${context.tasks} AS t
       WHERE s.task_id = t.id AND s.expiry_key = t.expiry_key AND s.name = ${name}
         AND ${inPlace(place, sql.ref('s.expiry_key'))} AND ${inPlace(place, sql.ref('t.expiry_key'))}
         AND t.id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
      RETURNING s.name
    `.execute(context.db);
    return rows.length > 0 || undefined;
  });
  return finished === true;
}
