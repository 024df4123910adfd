import type { TaskRef, TaskSnapshot } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookInPlace } from '../schema/task-place.js';
import { visibleTo } from '../schema/task-predicates.js';
import { toTaskSnapshot, type TaskSnapshotRow } from '../schema/task-row.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/**
 * What a reader sees of the task if it is the owner's and not expired: the statement of every
 * poll, so it selects only a snapshot's columns (no owner, arguments or capabilities to parse)
 * and the inputs only while some can be outstanding. It looks where the id places the task first.
 */
export async function readTask(context: SqlContext, ref: TaskRef): Promise<TaskSnapshot | undefined> {
  return lookInPlace(ref.taskId, async (place) => {
    const rows = await preparedRows(
      context,
      'read_task',
      sql<TaskSnapshotRow>`
      SELECT id, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms, scopes, result, error, trace_context,
             CASE WHEN status = 'input_required' THEN inputs END AS inputs,
             CASE WHEN status = 'input_required' THEN input_keys END AS input_keys
        FROM ${context.tasks}
       WHERE id = ${ref.taskId} AND ${inPlace(place)} AND ${visibleTo(ownerKey(ref.owner))}
    `,
    );
    return rows[0] && toTaskSnapshot(rows[0]);
  });
}
