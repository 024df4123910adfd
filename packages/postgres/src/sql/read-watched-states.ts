import { sql } from 'kysely';
import { toTaskStatus } from '../schema/task-row.js';
import type { TaskStatus } from '@mcp-tasks/core';
import type { SqlContext } from './sql-context.js';

/**
 * The status of tasks this node watches, by id alone: the rescan after a listener reconnect.
 * The ids come from this node's own runs, never from a caller, so there is no owner to check.
 * Expired or deleted tasks are absent.
 */
export async function readWatchedStates(context: SqlContext, taskIds: readonly string[]): Promise<Map<string, TaskStatus>> {
  const states = new Map<string, TaskStatus>();
  if (taskIds.length === 0) return states;
  const { rows } = await sql<{ id: string; status: string }>`
    SELECT id, status FROM ${context.tasks}
     WHERE id = ANY(${[...taskIds]}::text[]) AND (expires_at IS NULL OR expires_at > now())
  `.execute(context.db);
  for (const row of rows) states.set(row.id, toTaskStatus(row.status));
  return states;
}
