import { sql } from 'kysely';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * Up to `limit` ids, ordered after `afterId`, of the live, unexpired tasks recorded on `nodeId`
 * that were created more than `graceMs` ago (by the database clock): the tasks the node's own
 * runtime must hold a run for. The grace covers a task committed a moment before its run is
 * registered.
 */
export async function readLiveTasksOfNode(
  context: SqlContext,
  nodeId: string,
  graceMs: number,
  limit: number,
  afterId: string | null,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id
      FROM ${context.tasks}
     WHERE node_id = ${nodeId}
       AND ${isLive}
       AND (expires_at IS NULL OR expires_at > now())
       AND created_at < now() - make_interval(secs => ${graceMs / 1000}::float8)
       AND (${afterId}::text IS NULL OR id > ${afterId}::text)
     ORDER BY id
     LIMIT ${limit}
  `.execute(context.db);
  return rows.map((row) => row.id);
}
