import type { InputAnswerResult, InputResponses, TaskRef } from '@mcp-tasks/core';
import { decideAnswer, ownerKey, stateOf } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { getTask } from './get-task.js';
import { notifyClaimable } from './notify-claimable.js';
import { withExecutor, type SqlContext } from './sql-context.js';
import { wakeRunner } from './wake-runner.js';

/**
 * Records answers as core's state machine decides (`decideAnswer`: first answers of outstanding
 * keys only, every one checked before any is written), in one transaction on the locked row, and
 * NOTIFYs the running node, on commit, only if something was accepted; a task no run holds (a
 * parked one) that is `working` again is also announced as claimable, for a node with room to run.
 */
export async function answerInput(context: SqlContext, ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
  return context.db.transaction().execute(async (trx) => {
    const tx = withExecutor(context, trx);
    const task = await getTask(tx, ref, { forUpdate: true });
    if (!task) return undefined;
    const decision = decideAnswer(stateOf(task), responses);
    if (decision.accepted.length === 0) return { accepted: [], task };
    const { rows } = await sql<TaskRow>`
      UPDATE ${tx.tasks}
         SET inputs = inputs || ${JSON.stringify(decision.answered)}::jsonb,
             status = ${decision.status},
             last_updated_at = ${touchedAt}
       WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive}
      RETURNING *, ${wakeRunner(tx, sql`'input'`, sql`tasks`)},
                ${notifyClaimable(tx.channel, sql`tasks`)}
    `.execute(trx);
    // The row is locked and was live, so the compare-and-set cannot lose here.
    const row = rows[0];
    if (!row) throw new Error('mcp-tasks: a locked live task changed under its lock');
    return { accepted: decision.accepted, task: toTaskRecord(row) };
  });
}
