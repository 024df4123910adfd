import { sql } from 'kysely';
import type { OperatorTaskDetail } from '../operator/operator-types.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { SqlContext } from './sql-context.js';

/** A task by id alone, whoever owns it, expired or not (the sweeper may not have come by yet). */
export async function readTaskForOperator(context: SqlContext, taskId: string): Promise<OperatorTaskDetail | undefined> {
  const { rows } = await sql<TaskRow & { expired: boolean }>`
    SELECT *, coalesce(expires_at <= now(), false) AS expired FROM ${context.tasks} WHERE id = ${taskId}
  `.execute(context.db);
  return rows[0] && { ...toTaskRecord(rows[0]), expired: rows[0].expired };
}
