-- Cancels a gateway owes its upstreams: one row per cancelled proxied task, written when the
-- gateway's own task is cancelled and kept until the upstream acknowledges the cancel (or shows its
-- task already ended), so a cancel refused by a busy upstream (429), or lost with the node that
-- received it, is tried again from any node. Expand only: a node of the previous release neither
-- reads nor writes it (and cancels upstream once, as before).
CREATE TABLE upstream_cancels (
  -- The gateway's own task (tasks.id); not a foreign key: the row outlives the task's expiry.
  task_id          text        PRIMARY KEY,
  -- The mounted upstream's name, its task id, and the upstream session the task belongs to.
  upstream         text        NOT NULL,
  upstream_task_id text        NOT NULL,
  upstream_session text,
  -- pending: still owed; acknowledged: the upstream accepted it; ended: the upstream's task was
  -- already terminal or gone; abandoned: given up after max attempts (the upstream task's own TTL ends it).
  state            text        NOT NULL DEFAULT 'pending'
                   CONSTRAINT upstream_cancels_state_check
                   CHECK (state IN ('pending', 'acknowledged', 'ended', 'abandoned')),
  attempts         integer     NOT NULL DEFAULT 0,
  -- When a node may next try it: a claim moves it forward (a lease), a refusal to the upstream's
  -- Retry-After or the backoff.
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  settled_at       timestamptz
);

-- The retry loop's scan: the owed cancels that are due.
CREATE INDEX upstream_cancels_due_idx ON upstream_cancels (next_attempt_at) WHERE state = 'pending';
