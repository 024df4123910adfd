-- The cluster's task counts, computed by one node at a time (the maintenance leader) and read by
-- every node: the cluster-wide gauges and the console's counts come from this one row instead of
-- each node (or each open console) counting the whole table. Expand only: nothing reads it but
-- this release.
CREATE TABLE cluster_stats (
  -- A single row: the key can only be true.
  id                     boolean     PRIMARY KEY DEFAULT true CHECK (id),
  computed_at            timestamptz NOT NULL,
  computed_by            text        NOT NULL,
  -- [{"nodeId": text|null, "status": text, "count": n}], unexpired tasks by node and status.
  counts                 jsonb       NOT NULL,
  -- The oldest live (working or input_required) unexpired task's creation; NULL when none.
  oldest_live_created_at timestamptz
);
