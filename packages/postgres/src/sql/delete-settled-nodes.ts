import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Deletes up to `limit` expired lease rows of nodes that have no live task left (the reaper
 * failed them, or they ended). A node that comes back after this finds its lease gone and
 * starts over.
 */
export async function deleteSettledNodes(context: SqlContext, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM ${context.nodes}
     WHERE node_id IN (SELECT n.node_id FROM ${context.nodes} AS n
                        WHERE n.lease_expires_at <= now()
                          AND NOT EXISTS (SELECT 1 FROM ${context.tasks} AS t
                                           WHERE t.node_id = n.node_id AND t.status IN ('working', 'input_required'))
                        ORDER BY n.lease_expires_at
                        LIMIT ${limit}
                          FOR UPDATE SKIP LOCKED)
       AND lease_expires_at <= now()
  `.execute(context.db);
  return Number(result.numAffectedRows ?? 0n);
}
