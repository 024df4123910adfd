-- Tasks, one row each. The runner sets search_path to the configured schema, so names here are
-- unqualified. Every read and write filters on owner_key and expiry; every write is a
-- compare-and-set on status.
CREATE TABLE tasks (
  id               text        PRIMARY KEY,
  owner_subject    text        NOT NULL,
  owner_server     text        NOT NULL,
  owner_client_id  text        NOT NULL,
  owner_resource   text        NOT NULL,
  -- core's ownerKey(owner): the one value reads compare and the quota counts by.
  owner_key        text        NOT NULL,
  tool             text        NOT NULL,
  scopes           text[]      NOT NULL DEFAULT '{}',
  status           text        NOT NULL DEFAULT 'working'
                   CONSTRAINT tasks_status_check
                   CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message   text,
  created_at       timestamptz NOT NULL,
  last_updated_at  timestamptz NOT NULL,
  ttl_ms           bigint      CHECK (ttl_ms > 0),
  expires_at       timestamptz,
  poll_interval_ms bigint      NOT NULL CHECK (poll_interval_ms > 0),
  -- key -> {"request": …, "response"?: …}; input_keys keeps the order keys were asked in,
  -- which jsonb does not.
  inputs           jsonb       NOT NULL DEFAULT '{}',
  input_keys       text[]      NOT NULL DEFAULT '{}',
  result           jsonb,
  error            jsonb,
  node_id          text,
  -- Set once someone follows the task (notifications/tasks): only then do status changes NOTIFY,
  -- which keeps NOTIFY's commit lock off the create/complete path of unfollowed tasks.
  followed         boolean     NOT NULL DEFAULT false
);

-- The TTL sweeper's scan.
CREATE INDEX tasks_expires_at_idx ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- The quota's count of an owner's live tasks.
CREATE INDEX tasks_live_owner_key_idx ON tasks (owner_key) WHERE status IN ('working', 'input_required');

-- A node's live tasks (lease reaping).
CREATE INDEX tasks_live_node_id_idx ON tasks (node_id) WHERE status IN ('working', 'input_required');

-- Rows churn (created, updated a few times, deleted by the sweeper): vacuum on a fixed count of
-- dead rows instead of a fraction of the table.
ALTER TABLE tasks SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100);
