/** A `nodes` row (see migrations/0002_nodes.sql). */
export interface NodesTable {
  node_id: string;
  started_at: Date;
  renewed_at: Date;
  lease_expires_at: Date;
  lease_ms: string;
}
