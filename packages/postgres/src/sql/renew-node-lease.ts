import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/**
 * Extends this incarnation's lease, compare-and-set: only while it has not expired (by the
 * database clock) and was not taken over. `undefined` means the lease is lost: the reaper may
 * already have failed this node's tasks, so the node must not carry on as if it still held it.
 * `listening` records whether the node's LISTEN works (null: not known yet), for operators.
 */
export async function renewNodeLease(context: SqlContext, nodeId: string, startedAt: Date, leaseMs: number, listening: boolean | null = null): Promise<Date | undefined> {
  const { rows } = await sql<{ lease_expires_at: Date }>`
    UPDATE ${context.nodes}
       SET renewed_at = clock_timestamp(),
           lease_expires_at = clock_timestamp() + ${leaseMs}::bigint * interval '1 millisecond',
           listening = ${listening}::boolean
     WHERE node_id = ${nodeId}
       AND started_at = ${startedAt}
       AND lease_expires_at > clock_timestamp()
    RETURNING lease_expires_at
  `.execute(context.db);
  return rows[0]?.lease_expires_at;
}
