import type { InputAnswerResult, InputResponses, TaskInput, TaskRef } from '@mcp-tasks/core';
import { isTerminal, validateInputResponse } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { getTask } from './get-task.js';
import { withExecutor, type SqlContext } from './sql-context.js';

/**
 * Records the first answer of each outstanding key, in one transaction: lock the row, pick the
 * outstanding keys, validate every accepted answer against its request (one bad answer writes
 * nothing), write them, go back to `working` when none remain, and NOTIFY the running node, on
 * commit, only if something was accepted.
 */
export async function answerInput(context: SqlContext, ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
  return context.db.transaction().execute(async (trx) => {
    const tx = withExecutor(context, trx);
    const task = await getTask(tx, ref, { forUpdate: true });
    if (!task) return undefined;
    if (isTerminal(task.status)) return { accepted: [], task };
    const accepted = Object.keys(responses).filter((key) => {
      const input = task.inputs[key];
      return input !== undefined && input.response === undefined;
    });
    for (const key of accepted) validateInputResponse(key, task.inputs[key]!.request, responses[key]!);
    if (accepted.length === 0) return { accepted, task };

    const answered: Record<string, TaskInput> = {};
    for (const key of accepted) answered[key] = { request: task.inputs[key]!.request, response: responses[key]! };
    const outstanding = Object.keys(task.inputs).filter((key) => task.inputs[key]!.response === undefined && !(key in answered));
    const status = outstanding.length === 0 ? 'working' : task.status;
    const { rows } = await sql<TaskRow>`
      UPDATE ${tx.tasks}
         SET inputs = inputs || ${JSON.stringify(answered)}::jsonb,
             status = ${status},
             last_updated_at = ${touchedAt}
       WHERE id = ${ref.taskId} AND ${isLive}
      RETURNING *, pg_notify(${tx.channel}, json_build_object('op', 'input', 'taskId', id)::text)::text AS notified
    `.execute(trx);
    // The row is locked and was live, so the compare-and-set cannot lose here.
    const row = rows[0];
    if (!row) throw new Error('mcp-tasks: a locked live task changed under its lock');
    return { accepted, task: toTaskRecord(row) };
  });
}
