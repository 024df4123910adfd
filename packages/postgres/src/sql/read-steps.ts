import type { TaskRef, TaskStep } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/** The journal of a visible task, in the order its steps first started. */
export async function readSteps(context: SqlContext, ref: TaskRef): Promise<TaskStep[]> {
  const { rows } = await sql<TaskStep>`
    SELECT s.name, s.starts, s.done
      FROM ${context.steps} AS s
      JOIN ${context.tasks} AS t ON t.id = s.task_id
     WHERE t.id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
     ORDER BY s.seq
  `.execute(context.db);
  return rows;
}
