import type { JsonValue, TaskRef, TaskStep } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/** The journal of a visible task, in the order its steps first started; with `results`, finished steps carry their result. */
export async function readSteps(context: SqlContext, ref: TaskRef, results = false): Promise<TaskStep[]> {
  const { rows } = await sql<TaskStep & { result: JsonValue | null }>`
    SELECT s.name, s.starts, s.done, s.result
      FROM ${context.steps} AS s
      JOIN ${context.tasks} AS t ON t.id = s.task_id AND t.expiry_key = s.expiry_key
     WHERE t.id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
     ORDER BY s.seq
  `.execute(context.db);
  return rows.map(({ name, starts, done, result }) => ({ name, starts, done, ...(results && done ? { result } : {}) }));
}
