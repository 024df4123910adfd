import type { TaskRef, TaskSnapshot } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { inPlace, lookManyInPlace, type TaskPlace } from '../schema/task-place.js';
import { toTaskSnapshot, type TaskSnapshotRow } from '../schema/task-row.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';
import { textBatch } from './text-batch.js';

/**
 * What readers see of several tasks in one statement, by position: each ref's task if it is that
 * ref's owner's and not expired (the filters of `read-task.ts`, row by row). One row per ref (a ref
 * asked twice is read twice), so no two callers share a parsed value. It looks in the span of
 * the ids' places first.
 */
export async function readTaskBatch(context: SqlContext, refs: readonly TaskRef[]): Promise<(TaskSnapshot | undefined)[]> {
  return lookManyInPlace(
    refs,
    (ref) => ref.taskId,
    (some, place) => readBatchIn(context, some, place),
    (snapshot) => snapshot === undefined,
  );
}

async function readBatchIn(context: SqlContext, refs: readonly TaskRef[], place: TaskPlace): Promise<(TaskSnapshot | undefined)[]> {
  const rows = await preparedRows(
    context,
    'read_task_batch',
    sql<TaskSnapshotRow & { n: string }>`
    SELECT r.n, t.id, t.status, t.status_message, t.created_at, t.last_updated_at, t.ttl_ms, t.poll_interval_ms, t.scopes, t.result, t.error,
           CASE WHEN t.status = 'input_required' THEN t.inputs END AS inputs,
           CASE WHEN t.status = 'input_required' THEN t.input_keys END AS input_keys
      FROM unnest(${textBatch(refs.map((ref) => ref.taskId))}, ${textBatch(refs.map((ref) => ownerKey(ref.owner)))}) WITH ORDINALITY AS r(id, owner_key, n)
      JOIN ${context.tasks} AS t ON t.id = r.id AND t.owner_key = r.owner_key
     WHERE ${inPlace(place)} AND (t.expires_at IS NULL OR t.expires_at > now())
  `,
  );
  const snapshots: (TaskSnapshot | undefined)[] = new Array(refs.length).fill(undefined);
  for (const row of rows) snapshots[Number(row.n) - 1] = toTaskSnapshot(row);
  return snapshots;
}
