import type { RunClaim, TaskRef } from '@mcp-tasks/core';
import { decidePark, ownerKey, stateOf } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { heldBy, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { getTask } from './get-task.js';
import { withExecutor, type SqlContext } from './sql-context.js';

/**
 * Gives back the task `claim` holds while its run waits on input `key`, as core's state machine
 * decides (`decidePark`), on the locked row: an answer committed first keeps the run (the lock
 * orders the two), and one committed after finds no run and announces the task as claimable.
 * Counted as a hand-over, so waiting never uses up attempts. Nothing is announced here: the row
 * stays `input_required`, which no node claims.
 */
export async function parkTask(context: SqlContext, ref: TaskRef, claim: RunClaim, key: string): Promise<boolean> {
  return context.db.transaction().execute(async (trx) => {
    const tx = withExecutor(context, trx);
    const task = await getTask(tx, ref, { forUpdate: true });
    if (!task || decidePark(stateOf(task), claim, key).kind === 'keep') return false;
    const { rows } = await sql`
      UPDATE ${tx.tasks}
         SET node_id = NULL,
             handovers = handovers + 1,
             last_updated_at = ${touchedAt}
       WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))} AND ${heldBy(claim)}
      RETURNING id
    `.execute(trx);
    return rows.length === 1;
  });
}
