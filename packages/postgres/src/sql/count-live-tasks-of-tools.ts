import { ownerKey, type LiveTaskCount, type TaskOwner } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * The unexpired live tasks of `tools` in the whole database, and how many are `owner`'s: a
 * gateway's count of what it holds of one upstream (its tools' tasks), on every node alike. It
 * walks the live-task index (migration 0001), which holds only live rows.
 */
export async function countLiveTasksOfTools(context: SqlContext, tools: readonly string[], owner: TaskOwner): Promise<LiveTaskCount> {
  if (tools.length === 0) return { total: 0, owner: 0 };
  const { rows } = await sql<{ total: string; mine: string }>`
    SELECT count(*) AS total, count(*) FILTER (WHERE owner_key = ${ownerKey(owner)}) AS mine
      FROM ${context.tasks}
     WHERE ${isLive} AND tool = ANY(${[...tools]}::text[]) AND (expires_at IS NULL OR expires_at > now())
  `.execute(context.db);
  return { total: Number(rows[0]?.total ?? 0), owner: Number(rows[0]?.mine ?? 0) };
}
