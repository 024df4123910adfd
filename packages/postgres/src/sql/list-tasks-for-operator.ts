import { sql } from 'kysely';
import type { OperatorTaskFilter, OperatorTaskSummary } from '../operator/operator-types.js';
import { toTaskStatus } from '../schema/task-row.js';
import type { SqlContext } from './sql-context.js';

const DEFAULT_LIMIT = 50;

/** Every owner's tasks matching `filter`, newest first: the operator's view, across owners. */
export async function listTasksForOperator(context: SqlContext, filter: OperatorTaskFilter): Promise<OperatorTaskSummary[]> {
  const where = [sql`true`];
  if (filter.status !== undefined) where.push(sql`status = ${filter.status}`);
  if (filter.tool !== undefined) where.push(sql`tool = ${filter.tool}`);
  // A process id, or a name (NODE_ID): the tasks of every process of that name.
  if (filter.nodeId !== undefined) where.push(sql`(node_id = ${filter.nodeId} OR left(node_id, length(${filter.nodeId}) + 1) = ${filter.nodeId} || '/')`);
  if (filter.ownerSubject !== undefined) where.push(sql`owner_subject = ${filter.ownerSubject}`);
  // Keyset paging in the listing's own order; the subquery finds the cursor's row by primary key.
  if (filter.after !== undefined) where.push(sql`(created_at, id) < (SELECT c.created_at, c.id FROM ${context.tasks} c WHERE c.id = ${filter.after})`);
  if (filter.olderThanMs !== undefined) where.push(sql`created_at <= now() - make_interval(secs => ${filter.olderThanMs / 1000})`);
  const { rows } = await sql<{
    id: string;
    status: string;
    tool: string;
    owner_subject: string;
    node_id: string | null;
    status_message: string | null;
    created_at: Date;
    last_updated_at: Date;
    expired: boolean;
    tool_error: boolean;
  }>`
    SELECT id, status, tool, owner_subject, node_id, status_message, created_at, last_updated_at,
           coalesce(expires_at <= now(), false) AS expired,
           coalesce(status = 'completed' AND result->'isError' = 'true'::jsonb, false) AS tool_error
      FROM ${context.tasks}
     WHERE ${sql.join(where, sql` AND `)}
     ORDER BY created_at DESC, id DESC
     LIMIT ${filter.limit ?? DEFAULT_LIMIT}
  `.execute(context.db);
  return rows.map((row) => ({
    taskId: row.id,
    status: toTaskStatus(row.status),
    tool: row.tool,
    ownerSubject: row.owner_subject,
    nodeId: row.node_id,
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    expired: row.expired,
    toolError: row.tool_error,
  }));
}
