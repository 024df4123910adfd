/** A `nodes` row (see migrations/0002_nodes.sql and 0008_node_instances.sql, 0015_node_listening.sql, 0021_node_wake_channels.sql). */
export interface NodesTable {
  node_id: string;
  started_at: Date;
  renewed_at: Date;
  lease_expires_at: Date;
  lease_ms: string;
  /** The configured name; NULL on a row a node of an earlier release wrote. */
  name: string | null;
  /** The process's instance id; NULL on a row a node of an earlier release wrote. */
  instance_id: string | null;
  /** Whether the node's LISTEN works, as of its last renewal (migration 0015); NULL: not known. */
  listening: boolean | null;
  /** The channel the node LISTENs on for its own wake-ups (migration 0021); NULL: the broadcast only. */
  wake_channel: string | null;
}
