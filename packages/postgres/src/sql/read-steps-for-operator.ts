import { sql } from 'kysely';
import type { OperatorTaskSteps } from '../operator/operator-types.js';
import type { SqlContext } from './sql-context.js';

/**
 * A task's journal by task id alone, whoever owns it: its last `limit` steps in the order they
 * first started (where a long task is now), and how many it has in all.
 */
export async function readStepsForOperator(context: SqlContext, taskId: string, limit: number): Promise<OperatorTaskSteps> {
  const { rows } = await sql<{ name: string; starts: number; done: boolean; total: string }>`
    SELECT name, starts, done, count(*) OVER () AS total
      FROM ${context.steps}
     WHERE task_id = ${taskId}
     ORDER BY seq DESC
     LIMIT ${limit}
  `.execute(context.db);
  return { total: Number(rows[0]?.total ?? 0), steps: rows.reverse().map(({ name, starts, done }) => ({ name, starts, done })) };
}
