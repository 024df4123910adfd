import type { ListTasksOptions, TaskOwner, TaskPage } from '@mcp-tasks/core';
import { decodeTaskCursor, ownerKey, pageLimitOf, toTaskPage } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { SqlContext } from './sql-context.js';

/**
 * One page of the owner's visible tasks, newest first: a keyset read on
 * (owner_key, created_at DESC, id DESC), one row more than the page to tell whether more follow.
 */
export async function listTasks(context: SqlContext, owner: TaskOwner, options: ListTasksOptions): Promise<TaskPage> {
  const limit = pageLimitOf(options);
  const after = options.cursor === undefined ? undefined : decodeTaskCursor(options.cursor);
  const position = after
    ? sql`AND (created_at, id COLLATE "C") < (${new Date(after.createdAtMs)}::timestamptz, ${after.taskId} COLLATE "C")`
    : sql``;
  const { rows } = await sql<TaskRow>`
    SELECT * FROM ${context.tasks}
     WHERE ${visibleTo(ownerKey(owner))} ${position}
     ORDER BY created_at DESC, id COLLATE "C" DESC
     LIMIT ${limit + 1}
  `.execute(context.db);
  return toTaskPage(rows.map(toTaskRecord), limit);
}
