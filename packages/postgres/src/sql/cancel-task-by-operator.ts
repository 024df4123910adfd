import { sql } from 'kysely';
import { OPERATOR_CANCEL_MESSAGE, type OperatorCancelResult } from '../operator/operator-types.js';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { readTaskForOperator } from './read-task-for-operator.js';
import type { SqlContext } from './sql-context.js';
import { wakeRunner } from './wake-runner.js';

/**
 * tasks/cancel for an operator: the task by id alone (database access is the credential), the
 * same compare-and-set on a live, unexpired row and the same NOTIFY in the same statement, so
 * the node running it aborts the run; the status message says an operator cancelled it.
 * A terminal task is returned unchanged; `undefined` when there is no such task.
 */
export async function cancelTaskByOperator(context: SqlContext, taskId: string): Promise<OperatorCancelResult | undefined> {
  const { rows } = await sql<TaskRow>`
    UPDATE ${context.tasks}
       SET status = 'cancelled',
           status_message = ${OPERATOR_CANCEL_MESSAGE},
           last_updated_at = ${touchedAt}
     WHERE id = ${taskId} AND ${isLive} AND (expires_at IS NULL OR expires_at > now())
    RETURNING *, ${wakeRunner(context, sql`'cancel'`, context.tasks)}
  `.execute(context.db);
  if (rows[0]) return { task: { ...toTaskRecord(rows[0]), expired: false }, cancelled: true };
  const task = await readTaskForOperator(context, taskId);
  return task && { task, cancelled: false };
}
