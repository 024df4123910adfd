import { DEFAULT_MAX_ATTEMPTS, InvalidTaskValueError, QuotaExceededError, ownerKey, storedBytesOf, type CreateOptions, type NewTask, type TaskRecord } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { Settled } from '../writes/write-batcher.js';
import { storedBytesExceeded } from './create-task.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';

/** One create of a batch: what `createTask()` takes. */
export interface CreateWrite {
  readonly task: NewTask;
  readonly statusMessage: string | null;
  readonly options: CreateOptions;
}

type CreatedRow = TaskRow & { n: number; refusal: string | null; detail: string | null };

/**
 * Inserts several tasks in one statement and so one commit, through `create_durable_tasks()`
 * (migration 0022): the quota and the storage bound are checked row by row as `createTask()`
 * checks them, and a refused row (owner at its limit, pool full, id taken) settles only its own
 * create. The queued tasks among them are announced to the nodes once for the batch: a node that
 * hears it claims until nothing is left, whichever task the message names.
 */
export async function createTasks(context: SqlContext, writes: readonly CreateWrite[]): Promise<Settled<TaskRecord>[]> {
  const column = <T>(of: (write: CreateWrite) => T): T[] => writes.map(of);
  const rows = await preparedRows(
    context,
    'create_tasks',
    sql<CreatedRow>`
    WITH batch AS (
      SELECT b.n, b.refusal, b.detail, (b.created).*
        FROM ${context.createTasksFunction}(
          ${column(({ task }) => task.taskId)}::text[], ${column(({ task }) => task.owner.subject)}::text[], ${column(({ task }) => task.owner.server)}::text[],
          ${column(({ task }) => task.owner.clientId)}::text[], ${column(({ task }) => task.owner.resource)}::text[], ${column(({ task }) => ownerKey(task.owner))}::text[],
          ${column(({ task }) => task.tool)}::text[], ${column(({ task }) => JSON.stringify(task.scopes))}::jsonb[], ${column(({ statusMessage }) => statusMessage)}::text[],
          ${column(({ task }) => task.ttlMs)}::bigint[], ${column(({ task }) => task.pollIntervalMs)}::bigint[], ${column(({ task }) => task.nodeId)}::text[],
          ${column(({ options }) => (Number.isFinite(options.maxLive) ? options.maxLive : null))}::integer[],
          ${column(({ task }) => (task.args === undefined ? null : JSON.stringify(task.args)))}::jsonb[],
          ${column(({ task }) => (task.clientCapabilities == null ? null : JSON.stringify(task.clientCapabilities)))}::jsonb[],
          ${column(({ task }) => task.resumable ?? false)}::boolean[], ${column(({ task }) => task.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)}::integer[],
          ${column(({ task }) => task.traceContext ?? null)}::text[], ${column(({ options }) => options.storage?.pool === 'shared')}::boolean[],
          ${column(({ task, options }) => (options.storage ? storedBytesOf(task) : null))}::bigint[], ${column(({ options }) => options.storage?.maxBytes ?? null)}::bigint[]
        ) AS b
    )
    SELECT batch.*,
           (SELECT pg_notify(${context.channel}, json_build_object('op', 'claimable', 'taskId', min(id))::text)
              FROM batch WHERE node_id IS NULL AND status = 'working' HAVING count(*) > 0) AS claimable_notified
      FROM batch
  `,
  );
  const settled: Settled<TaskRecord>[] = new Array(writes.length);
  for (const row of rows) {
    const write = writes[row.n - 1];
    if (!write) continue;
    settled[row.n - 1] = settle(row, write);
  }
  return settled;
}

function settle(row: CreatedRow, write: CreateWrite): Settled<TaskRecord> {
  switch (row.refusal) {
    case null:
      return { value: toTaskRecord(row) };
    case 'MTQ01':
      return { error: new QuotaExceededError(write.options.maxLive) };
    case 'MTQ02':
      return { error: storedBytesExceeded(write.options.storage?.pool ?? 'owner', row.detail ?? undefined) };
    default:
      return { error: new InvalidTaskValueError('a task with this id already exists') };
  }
}
