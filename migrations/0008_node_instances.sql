-- One identity per process: a node's id is its configured name (NODE_ID) plus a random instance
-- id, so two processes given one name hold two leases instead of taking one from each other, and
-- a restart never mistakes a predecessor that still runs for itself. Expand only: a node of the
-- previous release writes neither column (NULL) and keeps its name as its id.
ALTER TABLE nodes
  -- The configured name the id was made from.
  ADD COLUMN name        text,
  -- The process's instance id, also the tail of the application_name of its lease and LISTEN
  -- connections: a namesake finds in pg_stat_activity whether any of them is still alive.
  ADD COLUMN instance_id text;

-- A starting node's look-up of its namesakes.
CREATE INDEX nodes_name_idx ON nodes (name) WHERE name IS NOT NULL;
