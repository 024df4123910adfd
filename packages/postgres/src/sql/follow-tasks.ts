import type { TaskOwner, TaskRecord } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { SqlContext } from './sql-context.js';

/**
 * Marks the owner's visible tasks among `taskIds` as followed and returns them, in one statement
 * however many ids a listen names. A task marked now is returned as the update left it (after any
 * write it waited for, which did not announce itself); one followed before as read, since every
 * later write to it announces itself. Unknown, foreign and expired ids are simply absent.
 */
export async function followTasks(context: SqlContext, owner: TaskOwner, taskIds: readonly string[]): Promise<TaskRecord[]> {
  if (taskIds.length === 0) return [];
  const { rows } = await sql<TaskRow>`
    WITH visible AS (
      SELECT * FROM ${context.tasks}
       WHERE id = ANY(${taskIds}::text[]) AND ${visibleTo(ownerKey(owner))}
    ), marked AS (
      UPDATE ${context.tasks} AS t SET followed = true
        FROM visible
       WHERE t.id = visible.id AND NOT visible.followed
      RETURNING t.*
    )
    SELECT * FROM marked
    UNION ALL
    SELECT * FROM visible WHERE followed
  `.execute(context.db);
  return rows.map(toTaskRecord);
}
