import type { TaskRef, TaskSnapshot } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { toTaskSnapshot, type TaskSnapshotRow } from '../schema/task-row.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/**
 * What readers see of several tasks in one statement, by position: each ref's task if it is that
 * ref's owner's and not expired (the filters of `read-task.ts`, row by row). One row per ref (a ref
 * asked twice is read twice), so no two callers share a parsed value.
 */
export async function readTaskBatch(context: SqlContext, refs: readonly TaskRef[]): Promise<(TaskSnapshot | undefined)[]> {
  const rows = await preparedRows(
    context,
    'read_task_batch',
    sql<TaskSnapshotRow & { n: string }>`
    SELECT r.n, t.id, t.status, t.status_message, t.created_at, t.last_updated_at, t.ttl_ms, t.poll_interval_ms, t.scopes, t.result, t.error,
           CASE WHEN t.status = 'input_required' THEN t.inputs END AS inputs,
           CASE WHEN t.status = 'input_required' THEN t.input_keys END AS input_keys
      FROM unnest(${refs.map((ref) => ref.taskId)}::text[], ${refs.map((ref) => ownerKey(ref.owner))}::text[]) WITH ORDINALITY AS r(id, owner_key, n)
      JOIN ${context.tasks} AS t ON t.id = r.id AND t.owner_key = r.owner_key
     WHERE t.expires_at IS NULL OR t.expires_at > now()
  `,
  );
  const snapshots: (TaskSnapshot | undefined)[] = new Array(refs.length).fill(undefined);
  for (const row of rows) snapshots[Number(row.n) - 1] = toTaskSnapshot(row);
  return snapshots;
}
