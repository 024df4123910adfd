-- Durable work: runs claimed by attempt, resumable tasks, a journal of steps. Expand only: every
-- column is defaulted or nullable and the previous release's create_task() stays, so a node of
-- the previous version keeps working beside a new one during a rolling upgrade (its tasks read as
-- attempt 1, not resumable; it never sees a queued task, whose node_id is NULL). A later release
-- may contract (drop create_task()) once no such node runs.
ALTER TABLE tasks
  -- Which run holds the task; every claim increments it, and every write of a run is a
  -- compare-and-set on (node_id, attempt), so a superseded run can never write again.
  ADD COLUMN attempt             integer NOT NULL DEFAULT 1,
  -- Runs that ended by a drain hand-over: they do not count against max_attempts.
  ADD COLUMN handovers           integer NOT NULL DEFAULT 0,
  ADD COLUMN resumable           boolean NOT NULL DEFAULT false,
  ADD COLUMN max_attempts        integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
  -- What another node needs to run the task: the tool's arguments and the creating request's
  -- client capabilities (which input the tool may ask for).
  ADD COLUMN args                jsonb,
  ADD COLUMN client_capabilities jsonb;

-- The claim's scan: live tasks no run holds, oldest first.
CREATE INDEX tasks_claimable_idx ON tasks (owner_key, created_at, id)
  WHERE node_id IS NULL AND status IN ('working', 'input_required');

-- The journal of ctx.step: one row per step of a task, gone with its task.
CREATE TABLE task_steps (
  task_id  text    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  name     text    NOT NULL,
  -- The order steps first started in.
  seq      bigint  GENERATED ALWAYS AS IDENTITY,
  -- How many times its work started, over every run: more than 1 means it was redone.
  starts   integer NOT NULL DEFAULT 1,
  done     boolean NOT NULL DEFAULT false,
  result   jsonb,
  PRIMARY KEY (task_id, name)
);

-- Creating a task with the durable-work columns, in one round trip; the same lock, count and
-- insert as create_task() (migration 0003). p_node_id NULL queues the task (attempt 0) for any
-- node to claim.
CREATE FUNCTION create_durable_task(
  p_id                  text,
  p_owner_subject       text,
  p_owner_server        text,
  p_owner_client_id     text,
  p_owner_resource      text,
  p_owner_key           text,
  p_tool                text,
  p_scopes              text[],
  p_status_message      text,
  p_ttl_ms              bigint,
  p_poll_interval_ms    bigint,
  p_node_id             text,
  p_max_live            integer,
  p_args                jsonb,
  p_client_capabilities jsonb,
  p_resumable           boolean,
  p_max_attempts        integer
) RETURNS SETOF tasks
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  live integer;
BEGIN
  IF p_max_live IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_owner_key, 0));
    SELECT count(*) INTO live
      FROM tasks
     WHERE owner_key = p_owner_key
       AND status IN ('working', 'input_required')
       AND (expires_at IS NULL OR expires_at > now());
    IF live >= p_max_live THEN
      RAISE EXCEPTION 'owner has % live tasks (limit %)', live, p_max_live USING ERRCODE = 'MTQ01';
    END IF;
  END IF;
  RETURN QUERY
    INSERT INTO tasks (
      id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
      tool, scopes, status, status_message, created_at, last_updated_at,
      ttl_ms, expires_at, poll_interval_ms, node_id,
      attempt, resumable, max_attempts, args, client_capabilities
    )
    SELECT p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
           p_tool, p_scopes, 'working', p_status_message, clock.created_at, clock.created_at,
           p_ttl_ms, clock.created_at + p_ttl_ms * interval '1 millisecond', p_poll_interval_ms, p_node_id,
           CASE WHEN p_node_id IS NULL THEN 0 ELSE 1 END, p_resumable, p_max_attempts, p_args, p_client_capabilities
      FROM (SELECT date_trunc('milliseconds', now()) AS created_at) AS clock
    ON CONFLICT (id) DO NOTHING
    RETURNING *;
END;
$$;
