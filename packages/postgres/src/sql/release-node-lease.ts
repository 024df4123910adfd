import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Ends this incarnation's lease now (a clean shutdown), so the reaper of another node settles
 * at once whatever this node leaves live instead of waiting for the lease to run out.
 */
export async function releaseNodeLease(context: SqlContext, nodeId: string, startedAt: Date): Promise<void> {
  await sql`
    UPDATE ${context.nodes}
       SET lease_expires_at = least(lease_expires_at, clock_timestamp())
     WHERE node_id = ${nodeId} AND started_at = ${startedAt}
  `.execute(context.db);
}
