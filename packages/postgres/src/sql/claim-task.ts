import type { TaskRecord } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { isClaimable, isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { SqlContext } from './sql-context.js';

/**
 * Claims one claimable task of `tools` for `nodeId`, incrementing its attempt (which fences off
 * any earlier run). Fair between owners: each owner's oldest claimable task is a candidate, and the
 * owner with the fewest held live tasks goes first, then the oldest candidate. The candidate row is
 * locked `FOR UPDATE SKIP LOCKED`, so two claimers never take one task and never wait on each
 * other; the UPDATE re-checks that no run holds it (compare-and-set).
 */
export async function claimTask(context: SqlContext, nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined> {
  if (tools.length === 0) return undefined;
  const { rows } = await sql<TaskRow>`
    WITH heads AS (
      SELECT DISTINCT ON (owner_key) id, owner_key, created_at
        FROM ${context.tasks}
       WHERE ${isClaimable} AND tool = ANY(${[...tools]}::text[])
       ORDER BY owner_key, created_at, id
    ), ranked AS (
      SELECT heads.id,
             row_number() OVER (ORDER BY (SELECT count(*) FROM ${context.tasks} AS held
                                           WHERE held.owner_key = heads.owner_key
                                             AND held.node_id IS NOT NULL
                                             AND held.status IN ('working', 'input_required')),
                                         heads.created_at, heads.id) AS rank
        FROM heads
    ), candidate AS (
      SELECT t.id
        FROM ${context.tasks} AS t
        JOIN ranked ON ranked.id = t.id
       WHERE t.node_id IS NULL
       ORDER BY ranked.rank
       LIMIT 1
         FOR UPDATE OF t SKIP LOCKED
    )
    UPDATE ${context.tasks} AS t
       SET node_id = ${nodeId},
           attempt = t.attempt + 1,
           last_updated_at = ${touchedAt}
      FROM candidate
     WHERE t.id = candidate.id AND t.node_id IS NULL AND ${isLive}
    RETURNING t.*
  `.execute(context.db);
  return rows[0] && toTaskRecord(rows[0]);
}
