import { sql } from 'kysely';
import type { OperatorNodeSummary } from '../operator/operator-types.js';
import { isLive } from '../schema/task-predicates.js';
import type { SqlContext } from './sql-context.js';

/** Every node with a lease row: lease age and health by the database clock, and its live tasks. */
export async function listNodesForOperator(context: SqlContext): Promise<OperatorNodeSummary[]> {
  const { rows } = await sql<{
    node_id: string;
    name: string | null;
    started_at: Date;
    renewed_at: Date;
    lease_expires_at: Date;
    lease_age_ms: string;
    expired: boolean;
    running: string;
    listening: boolean | null;
  }>`
    SELECT n.node_id, n.name, n.started_at, n.renewed_at, n.lease_expires_at, n.listening,
           floor(extract(epoch FROM now() - n.renewed_at) * 1000)::bigint AS lease_age_ms,
           n.lease_expires_at <= now() AS expired,
           (SELECT count(*) FROM ${context.tasks} t WHERE t.node_id = n.node_id AND ${isLive}) AS running
      FROM ${context.nodes} n
     ORDER BY n.node_id
  `.execute(context.db);
  return rows.map((row) => ({
    nodeId: row.node_id,
    name: row.name,
    startedAt: row.started_at,
    renewedAt: row.renewed_at,
    leaseExpiresAt: row.lease_expires_at,
    leaseAgeMs: Number(row.lease_age_ms),
    expired: row.expired,
    running: Number(row.running),
    listening: row.listening,
  }));
}
