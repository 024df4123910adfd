-- What an owner keeps until its tasks expire, bounded in bytes (issue 37): the live-task quota
-- counts only live tasks, so one owner could keep thousands of finished ones, each with its
-- arguments and result, until their TTL. Summing the owner's rows on every create would cost a
-- scan of everything it keeps; instead each create adds its task's bytes to a counter row of the
-- minute its task expires by, and the check sums the owner's counter rows that have not expired
-- (at most one per minute of the TTL). A counter row's bytes free up at the end of its minute, so
-- room comes back within a minute of the tasks' expiry. Expand only: a node of an earlier release
-- calls the older create_durable_task() and charges nothing.
CREATE TABLE task_storage (
  -- An owner key, or '*' for every caller without an authenticated subject together.
  storage_key text        NOT NULL,
  -- The end of the minute its tasks expire in ('infinity' for tasks that never expire).
  expires_by  timestamptz NOT NULL,
  -- The shared pool spreads its writes over a few rows (0-7), so creates and finishes of callers
  -- without a subject do not all update one row; an owner's pool uses row 0, under its lock.
  shard       smallint    NOT NULL DEFAULT 0,
  bytes       bigint      NOT NULL,
  PRIMARY KEY (storage_key, expires_by, shard)
);

-- Which pool a task's bytes were charged to: 'owner' (its owner key), 'shared' ('*'), or NULL
-- (nothing charged: the bound was off, or an earlier release created it). A result or error
-- larger than the row's allowance is charged there when the task finishes.
ALTER TABLE tasks ADD COLUMN storage_pool text CHECK (storage_pool IN ('owner', 'shared'));

-- The counter row a task expiring at p_expires_at is charged to.
CREATE FUNCTION task_storage_bucket(p_expires_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE
AS $$ SELECT coalesce(date_trunc('minute', p_expires_at) + interval '1 minute', 'infinity'::timestamptz) $$;

-- Charges p_bytes to p_key's pool for tasks expiring at p_expires_at, or raises SQLSTATE MTQ02
-- (DETAIL: a JSON object with kept, limit and freesInMs) when the pool would then keep more than
-- p_max_bytes. An owner's pool is checked under the owner's advisory lock (the quota's, taken
-- again: advisory locks stack within a transaction), so concurrent creates of one owner never
-- overshoot. The shared pool takes no lock (it would make every caller without a subject wait for
-- every other): concurrent creates can overshoot it by what they charge together.
CREATE FUNCTION charge_task_storage(p_key text, p_shared boolean, p_expires_at timestamptz, p_bytes bigint, p_max_bytes bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  kept     bigint;
  frees_at timestamptz;
BEGIN
  IF NOT p_shared THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_key, 0));
  END IF;
  SELECT coalesce(sum(bytes), 0), min(expires_by) INTO kept, frees_at
    FROM task_storage
   WHERE storage_key = p_key AND expires_by > now();
  IF kept + p_bytes > p_max_bytes THEN
    RAISE EXCEPTION 'pool keeps % bytes (limit %)', kept, p_max_bytes USING
      ERRCODE = 'MTQ02',
      DETAIL = json_build_object(
        'kept', kept,
        'limit', p_max_bytes,
        'freesInMs', CASE WHEN frees_at IS NULL OR frees_at = 'infinity' THEN NULL
                          ELSE ceil(extract(epoch FROM frees_at - now()) * 1000) END)::text;
  END IF;
  INSERT INTO task_storage (storage_key, expires_by, shard, bytes)
  VALUES (p_key, task_storage_bucket(p_expires_at), CASE WHEN p_shared THEN floor(random() * 8)::smallint ELSE 0 END, p_bytes)
  ON CONFLICT (storage_key, expires_by, shard) DO UPDATE SET bytes = task_storage.bytes + EXCLUDED.bytes;
END;
$$;

-- create_durable_task() (migration 0011) with the stored-bytes bound: p_max_stored_bytes NULL
-- charges nothing (as before); otherwise p_stored_bytes are charged to the owner's pool, or the
-- shared one when p_shared_storage, before the insert (charge_task_storage above).
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
  p_max_attempts        integer,
  p_trace_context       text,
  p_shared_storage      boolean,
  p_stored_bytes        bigint,
  p_max_stored_bytes    bigint
) RETURNS SETOF tasks
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  live integer;
  v_created_at timestamptz := date_trunc('milliseconds', now());
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
  IF p_max_stored_bytes IS NOT NULL THEN
    PERFORM charge_task_storage(
      CASE WHEN p_shared_storage THEN '*' ELSE p_owner_key END, p_shared_storage,
      v_created_at + p_ttl_ms * interval '1 millisecond', p_stored_bytes, p_max_stored_bytes);
  END IF;
  RETURN QUERY
    INSERT INTO tasks (
      id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
      tool, scopes, status, status_message, created_at, last_updated_at,
      ttl_ms, expires_at, poll_interval_ms, node_id,
      attempt, resumable, max_attempts, args, client_capabilities, trace_context, storage_pool
    )
    VALUES (p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
            p_tool, p_scopes, 'working', p_status_message, v_created_at, v_created_at,
            p_ttl_ms, v_created_at + p_ttl_ms * interval '1 millisecond', p_poll_interval_ms, p_node_id,
            CASE WHEN p_node_id IS NULL THEN 0 ELSE 1 END, p_resumable, p_max_attempts, p_args, p_client_capabilities, p_trace_context,
            CASE WHEN p_max_stored_bytes IS NULL THEN NULL WHEN p_shared_storage THEN 'shared' ELSE 'owner' END)
    ON CONFLICT (id) DO NOTHING
    RETURNING *;
END;
$$;
