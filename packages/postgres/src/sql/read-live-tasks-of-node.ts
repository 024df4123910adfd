import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/** A live task of a node as a rescue round read it: its id and the attempt that held it then. */
export interface LiveTaskOfNode {
  readonly id: string;
  readonly attempt: number;
}

/**
 * Up to `limit`, ordered by id after `afterId`, of the live, unexpired tasks recorded on `nodeId`
 * unchanged for more than `graceMs` (by the database clock), with their attempt: the tasks the
 * node's own runtime must hold a run for. The grace counts from the row's last change, which a
 * claim is (it sets `last_updated_at`), not from its creation: a task queued or parked longer
 * than the grace and claimed a moment ago is not yet registered with its run, and is no orphan.
 */
export async function readLiveTasksOfNode(
  context: SqlContext,
  nodeId: string,
  graceMs: number,
  limit: number,
  afterId: string | null,
): Promise<LiveTaskOfNode[]> {
  const { rows } = await sql<LiveTaskOfNode>`
    SELECT id, attempt
      FROM ${context.tasks}
     WHERE node_id = ${nodeId}
       AND ${isLive}
       AND (expires_at IS NULL OR expires_at > now())
       AND greatest(created_at, last_updated_at) < now() - make_interval(secs => ${graceMs / 1000}::float8)
       AND (${afterId}::text IS NULL OR id > ${afterId}::text)
     ORDER BY id
     LIMIT ${limit}
  `.execute(context.db);
  return rows;
}
