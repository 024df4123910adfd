import { sql } from 'kysely';
import type { NodeIdentity } from '../node/node-identity.js';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/**
 * Ends the lease of every other process registered under this node's name that is known to be
 * gone: none of the connections it names after its instance id (`applicationNames`, one prefix
 * per role) is open any more, so no run of its tasks can still go on. Returns their node ids, for
 * this node to settle their live tasks at once ("restarted") rather than after their lease.
 *
 * A namesake with any such connection open may still be running (a predecessor draining, a
 * second process given the same name): its lease is left alone, and its tasks wait for it like
 * any node's. Should it come back after all, its next renewal finds the lease ended, and it
 * stops its runs. A row an earlier release wrote has no instance id and is never matched.
 */
export async function expireGoneNamesakes(context: SqlContext, self: NodeIdentity, applicationNames: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ node_id: string }>`
    UPDATE ${context.nodes} AS n
       SET lease_expires_at = least(n.lease_expires_at, clock_timestamp())
     WHERE n.name = ${self.name}
       AND n.node_id <> ${self.nodeId}
       AND n.instance_id IS NOT NULL
       -- An ended lease with nothing live left needs nothing (the reaper forgets the row).
       AND (n.lease_expires_at > clock_timestamp()
            OR EXISTS (SELECT 1 FROM ${context.tasks} AS t WHERE t.node_id = n.node_id AND ${isLive}))
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                        WHERE a.datname = current_database()
                          AND a.application_name = ANY (SELECT prefix || ':' || n.instance_id
                                                          FROM unnest(${applicationNames}::text[]) AS prefix))
    RETURNING n.node_id
  `.execute(context.db);
  return rows.map((row) => row.node_id).sort();
}
