import type { JsonValue, RunClaim, StepBegin, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { heldBy, isLive, visibleTo } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * Starts step `name` of a task `claim` holds, in one statement: a new step is journaled with one
 * start; an unfinished one counts another start (its work is redone); a finished one returns its
 * result untouched. No row: the claim no longer holds the task. The task row is share-locked, so a
 * reaper releasing it waits for the start to be journaled (or the start sees the release).
 */
export async function beginStep(context: SqlContext, ref: TaskRef, claim: RunClaim, name: string): Promise<StepBegin> {
  const row = await lookInPlace(ref.taskId, async (place) => {
    const { rows } = await sql<{ starts: number; done: boolean; result: unknown }>`
      WITH held AS (
        SELECT id, expiry_key FROM ${context.tasks}
         WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive} AND ${heldBy(claim)}
           FOR SHARE
      )
      INSERT INTO ${context.steps} AS s (task_id, name, expiry_key)
      SELECT id, ${name}, expiry_key FROM held
      ON CONFLICT (task_id, name, expiry_key) DO UPDATE
         SET starts = s.starts + CASE WHEN s.done THEN 0 ELSE 1 END
      RETURNING s.starts, s.done, s.result
    `.execute(context.db);
    return rows[0];
  });
  if (!row) return { state: 'lost' };
  return row.done ? { state: 'done', result: (row.result ?? null) as JsonValue } : { state: 'run', starts: row.starts };
}
