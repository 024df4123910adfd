import type { TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * Marks a visible task as followed, so its later status changes NOTIFY. Written once per task:
 * a task followed before is only read. `false` when the task is not visible to the owner.
 */
export async function followTask(context: SqlContext, ref: TaskRef): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    WITH visible AS (
      SELECT id, followed FROM ${context.tasks}
       WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
    ), marked AS (
      UPDATE ${context.tasks} AS t SET followed = true
        FROM visible
       WHERE t.id = visible.id AND NOT visible.followed
      RETURNING t.id
    )
    SELECT id FROM visible
  `.execute(context.db);
  return rows.length > 0;
}
