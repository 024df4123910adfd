import type { TaskRecord, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { isLive, touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import { getTask } from './get-task.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';
import { wakeRunner } from './wake-runner.js';

/**
 * Marks a live task `cancelled` and announces it to the node running it (wake-runner.ts) in the
 * same statement, so the NOTIFY goes out on commit and only when the row changed. A terminal task is returned
 * unchanged; `undefined` when it is not visible.
 */
export async function cancelTask(context: SqlContext, ref: TaskRef): Promise<TaskRecord | undefined> {
  const cancelled = await lookInPlace(ref.taskId, async (place) => {
    const rows = await preparedRows(
      context,
      'cancel_task',
      sql<TaskRow>`
      UPDATE ${context.tasks}
         SET status = 'cancelled',
             last_updated_at = ${touchedAt}
       WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))} AND ${isLive}
      RETURNING *, ${wakeRunner(context, sql`'cancel'`, context.tasks)}
    `,
    );
    return rows[0] && toTaskRecord(rows[0]);
  });
  return cancelled ?? getTask(context, ref);
}
