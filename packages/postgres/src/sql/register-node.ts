import { sql } from 'kysely';
import type { SqlContext } from './sql-context.js';

/** A lease this node holds. */
export interface NodeLeaseRow {
  readonly startedAt: Date;
  readonly leaseExpiresAt: Date;
}

/**
 * Starts a new incarnation of `nodeId`: inserts its lease row, or takes over an existing one
 * (a restart under the same id), with a lease of `leaseMs` from the database's now.
 */
export async function registerNode(context: SqlContext, nodeId: string, leaseMs: number): Promise<NodeLeaseRow> {
  const { rows } = await sql<{ started_at: Date; lease_expires_at: Date }>`
    INSERT INTO ${context.nodes} AS n (node_id, started_at, renewed_at, lease_expires_at, lease_ms)
    SELECT ${nodeId}, clock, clock, clock + ${leaseMs}::bigint * interval '1 millisecond', ${leaseMs}::bigint
      -- Milliseconds, what a JavaScript Date holds: renewals compare started_at with this value.
      FROM (SELECT date_trunc('milliseconds', clock_timestamp()) AS clock) AS now
    ON CONFLICT (node_id) DO UPDATE
       SET started_at = excluded.started_at,
           renewed_at = excluded.renewed_at,
           lease_expires_at = excluded.lease_expires_at,
           lease_ms = excluded.lease_ms
    RETURNING started_at, lease_expires_at
  `.execute(context.db);
  const row = rows[0]!;
  return { startedAt: row.started_at, leaseExpiresAt: row.lease_expires_at };
}
