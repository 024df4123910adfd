import { CARRIED_CAPABILITY } from '@mcp-tasks/core';
import { sql, type Kysely } from 'kysely';
import type { HistoryTables } from './history-tables.js';
import type { OperatorRetryResult } from './history-types.js';

/** Why a retry was refused, in the words the console and the CLI show. */
const REFUSALS: Record<string, string> = {
  missing: 'no such task',
  expired: 'the task expired (its owner no longer sees it)',
  live: 'the task has not ended: only a failed or cancelled task is retried',
  completed: 'the task completed: only a failed or cancelled task is retried',
  'no-args': 'the task has no stored arguments (created by an earlier release)',
  tool: 'its tool does not allow a retry (defineTool retry: false, the default for a tool neither resumable nor idempotent)',
};

/**
 * Runs a failed or cancelled task again for an operator: a new task with the source's owner, tool,
 * scopes, arguments, client capabilities, durability and time to live, queued (no node, attempt 0)
 * for whichever node serves the tool, announced as claimable. Where the tool allows it: the
 * policy stored with the task when it was created (`retry` beside the carried value), by default
 * its `resumable`. One retry per task: a task retried already names its retry instead (the
 * operator retries that one). Both histories get an `operator` row (who, and the other task).
 * The owner's live-task limit is not checked: the operator, not the owner, asks for the task.
 *
 * Two statements in one transaction: the source row is locked first, so a concurrent retry of the
 * same task waits and the second statement (a fresh snapshot) sees the first one's record.
 */
export async function retryTaskByOperator(db: Kysely<any>, tables: HistoryTables, channel: string, taskId: string, newTaskId: string, actor: string): Promise<OperatorRetryResult> {
  return db.transaction().execute(async (trx) => {
    const locked = await sql`SELECT id FROM ${tables.tasks} WHERE id = ${taskId} FOR UPDATE`.execute(trx);
    if (locked.rows.length === 0) return { retried: false, reason: REFUSALS['missing']! };
    const { rows } = await sql<{ verdict: string; retried_as: string | null }>`
      WITH verdict AS (
        SELECT s.*,
               (SELECT e.detail->>'relatedTaskId' FROM ${tables.events} AS e
                 WHERE e.task_id = s.id AND e.expiry_key = s.expiry_key AND e.kind = 'operator' AND e.detail->>'action' = 'retry'
                 ORDER BY e.seq DESC LIMIT 1) AS retried_as,
               CASE
                 WHEN s.expires_at IS NOT NULL AND s.expires_at <= now() THEN 'expired'
                 WHEN s.status IN ('working', 'input_required') THEN 'live'
                 WHEN s.status = 'completed' THEN 'completed'
                 WHEN s.args IS NULL THEN 'no-args'
                 WHEN NOT coalesce((s.client_capabilities -> ${CARRIED_CAPABILITY}::text ->> 'retry')::boolean, s.resumable) THEN 'tool'
                 ELSE 'ok'
               END AS verdict
          FROM ${tables.tasks} AS s
         WHERE s.id = ${taskId}
      ), created AS (
        INSERT INTO ${tables.tasks} (
          id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
          tool, scopes, status, status_message, created_at, last_updated_at,
          ttl_ms, expires_at, poll_interval_ms, node_id,
          attempt, resumable, max_attempts, args, client_capabilities
        )
        SELECT ${newTaskId}, v.owner_subject, v.owner_server, v.owner_client_id, v.owner_resource, v.owner_key,
               v.tool, v.scopes, 'working', ${`Queued: a retry of ${taskId}`}, clock.at, clock.at,
               v.ttl_ms, clock.at + v.ttl_ms * interval '1 millisecond', v.poll_interval_ms, NULL,
               0, v.resumable, v.max_attempts, v.args, v.client_capabilities
          FROM verdict AS v, (SELECT date_trunc('milliseconds', now()) AS at) AS clock
         WHERE v.verdict = 'ok' AND v.retried_as IS NULL
        RETURNING id, status, attempt, expiry_key,
                  pg_notify(${channel}, json_build_object('op', 'claimable', 'taskId', id)::text)::text AS notified
      ), recorded AS (
        INSERT INTO ${tables.events} (task_id, kind, status, node_id, attempt, detail, expiry_key)
        SELECT v.id, 'operator', v.status, v.node_id, v.attempt,
               jsonb_build_object('actor', ${actor}::text, 'action', 'retry', 'relatedTaskId', c.id), v.expiry_key
          FROM verdict AS v, created AS c
        UNION ALL
        SELECT c.id, 'operator', c.status, NULL, c.attempt,
               jsonb_build_object('actor', ${actor}::text, 'action', 'retry_of', 'relatedTaskId', ${taskId}::text), c.expiry_key
          FROM created AS c
      )
      SELECT verdict, retried_as FROM verdict
    `.execute(trx);
    const row = rows[0]!;
    if (row.verdict !== 'ok') return { retried: false, reason: REFUSALS[row.verdict] ?? row.verdict };
    if (row.retried_as !== null) return { retried: false, reason: `the task was retried already, as ${row.retried_as}` };
    return { retried: true, newTaskId };
  });
}
