import type { TaskRecord } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { isClaimable, isLive, touchedAt } from '../schema/task-predicates.js';
import { toTaskRecord } from '../schema/task-row.js';
import type { TaskRow } from '../schema/tasks-table.js';
import type { SqlContext } from './sql-context.js';

/**
 * How many of each owner's oldest claimable tasks are candidates: claimers running at once that
 * skip a locked head still find work of the same owner, not only of the next.
 */
const CANDIDATES_PER_OWNER = 8;

/**
 * Claims one claimable task of `tools` for `nodeId`, incrementing its attempt (which fences off
 * any earlier run). Fair between owners: each owner's oldest claimable tasks are candidates,
 * ranked by the owner's held live tasks plus the candidate's place in the owner's queue, then
 * age; so the owner with the fewest held tasks goes first, and one owner's backlog does not
 * starve another's. The candidate row is locked `FOR UPDATE SKIP LOCKED`, so two claimers never
 * take one task and never wait on each other; the UPDATE re-checks that the task is still
 * claimable (compare-and-set).
 *
 * Index-driven (migration 0006): the owners with claimable tasks are found by a skip scan (one
 * index probe per owner), each owner's candidates and held count by its own index range, so the
 * cost grows with the owners waiting, never with the backlog's length.
 */
export async function claimTask(context: SqlContext, nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined> {
  if (tools.length === 0) return undefined;
  const { rows } = await sql<TaskRow>`
    WITH RECURSIVE owners AS (
      (SELECT owner_key FROM ${context.tasks}
        WHERE node_id IS NULL AND status = 'working'
        ORDER BY owner_key LIMIT 1)
      UNION ALL
      SELECT (SELECT next.owner_key FROM ${context.tasks} AS next
               WHERE next.node_id IS NULL AND next.status = 'working' AND next.owner_key > owners.owner_key
               ORDER BY next.owner_key LIMIT 1)
        FROM owners
       WHERE owners.owner_key IS NOT NULL
    ), candidates AS (
      SELECT head.id, head.created_at, held.n + head.place AS rank
        FROM owners
        CROSS JOIN LATERAL (
          SELECT count(*) AS n FROM ${context.tasks} AS held
           WHERE held.owner_key = owners.owner_key AND held.node_id IS NOT NULL AND ${isLive}
        ) AS held
        CROSS JOIN LATERAL (
          SELECT t.id, t.created_at, row_number() OVER (ORDER BY t.created_at, t.id) AS place
            FROM ${context.tasks} AS t
           WHERE t.owner_key = owners.owner_key AND ${isClaimable} AND t.tool = ANY(${[...tools]}::text[])
           ORDER BY t.created_at, t.id
           LIMIT ${CANDIDATES_PER_OWNER}
        ) AS head
       WHERE owners.owner_key IS NOT NULL
    ), candidate AS (
      SELECT t.id
        FROM ${context.tasks} AS t
        JOIN candidates ON candidates.id = t.id
       WHERE ${isClaimable}
       ORDER BY candidates.rank, candidates.created_at, candidates.id
       LIMIT 1
         FOR UPDATE OF t SKIP LOCKED
    )
    UPDATE ${context.tasks} AS t
       SET node_id = ${nodeId},
           attempt = t.attempt + 1,
           last_updated_at = ${touchedAt}
      FROM candidate
     WHERE t.id = candidate.id AND ${isClaimable}
    RETURNING t.*
  `.execute(context.db);
  return rows[0] && toTaskRecord(rows[0]);
}
