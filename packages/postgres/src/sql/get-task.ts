import type { TaskRecord, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/**
 * The task if it is the owner's and not expired, looked for where its id places it first.
 * `forUpdate` locks the row for the transaction.
 */
export async function getTask(context: SqlContext, ref: TaskRef, options: { forUpdate?: boolean } = {}): Promise<TaskRecord | undefined> {
  const lock = options.forUpdate ? sql`FOR UPDATE` : sql``;
  return lookInPlace(ref.taskId, async (place) => {
    const rows = await preparedRows(
      context,
      'get_task',
      sql<TaskRow>`
      SELECT * FROM ${context.tasks}
       WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))}
       ${lock}
    `,
    );
    return rows[0] && toTaskRecord(rows[0]);
  });
}
