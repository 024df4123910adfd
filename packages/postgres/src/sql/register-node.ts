import { sql } from 'kysely';
import type { NodeIdentity } from '../node/node-identity.js';
import type { SqlContext } from './sql-context.js';

/** A lease this node holds. */
export interface NodeLeaseRow {
  readonly startedAt: Date;
  readonly leaseExpiresAt: Date;
}

/**
 * Starts a new incarnation of this process's lease: inserts its row, or takes its own row over
 * again after losing the lease, with a lease of `leaseMs` from the database's now, and the channel
 * its listener hears its own wake-ups on (null: the broadcast only).
 */
export async function registerNode(context: SqlContext, identity: NodeIdentity, leaseMs: number, wakeChannel: string | null): Promise<NodeLeaseRow> {
  const { rows } = await sql<{ started_at: Date; lease_expires_at: Date }>`
    INSERT INTO ${context.nodes} AS n (node_id, started_at, renewed_at, lease_expires_at, lease_ms, name, instance_id, wake_channel)
    SELECT ${identity.nodeId}, clock, clock, clock + ${leaseMs}::bigint * interval '1 millisecond', ${leaseMs}::bigint,
           ${identity.name}, ${identity.instanceId}, ${wakeChannel}::text
      -- Milliseconds, what a JavaScript Date holds: renewals compare started_at with this value.
      FROM (SELECT date_trunc('milliseconds', clock_timestamp()) AS clock) AS now
    ON CONFLICT (node_id) DO UPDATE
       SET started_at = excluded.started_at,
           renewed_at = excluded.renewed_at,
           lease_expires_at = excluded.lease_expires_at,
           lease_ms = excluded.lease_ms,
           name = excluded.name,
           instance_id = excluded.instance_id,
           wake_channel = excluded.wake_channel
    RETURNING started_at, lease_expires_at
  `.execute(context.db);
  const row = rows[0]!;
  return { startedAt: row.started_at, leaseExpiresAt: row.lease_expires_at };
}
