import { sql } from 'kysely';
import type { OperatorTaskStep } from '../operator/operator-types.js';
import type { SqlContext } from './sql-context.js';

/** A task's journal by task id alone, whoever owns it, in the order its steps first started. */
export async function readStepsForOperator(context: SqlContext, taskId: string): Promise<OperatorTaskStep[]> {
  const { rows } = await sql<OperatorTaskStep>`
    SELECT name, starts, done FROM ${context.steps} WHERE task_id = ${taskId} ORDER BY seq
  `.execute(context.db);
  return rows;
}
