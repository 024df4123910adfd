-- Node leases: one row per running node (store), renewed every lease/3. A task of a node whose
-- lease expired is failed by the lease reaper (one node at a time), compare-and-set on status.
CREATE TABLE nodes (
  node_id          text        PRIMARY KEY,
  -- When this incarnation registered; tasks created before it belong to an earlier one.
  started_at       timestamptz NOT NULL,
  renewed_at       timestamptz NOT NULL,
  lease_expires_at timestamptz NOT NULL,
  lease_ms         bigint      NOT NULL CHECK (lease_ms > 0)
);

-- The reaper's scan of expired leases.
CREATE INDEX nodes_lease_expires_at_idx ON nodes (lease_expires_at);
