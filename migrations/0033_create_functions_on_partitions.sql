-- The create functions on the partitioned table (migration 0032), the same signatures as before,
-- so every release's create keeps working: each writes expiry_key (task_expiry_key(), migration
-- 0030) and returns the new table's row type. Dropped and made again, not replaced: a function's
-- return type cannot change in place, and the old ones return the row type of the table renamed
-- to tasks_unbounded. A statement prepared on an old one is planned again by name, with the same
-- columns.
--
-- The id: the key is (id, expiry_key), so ON CONFLICT alone would let a retried create with the
-- same id (a later clock, so another expiry) insert a second row in another partition. Each
-- insert first looks the id up (one probe of each partition's key); under the owner's lock
-- (max_live given) that is exact, and ids carry 144 random bits, so only a caller racing itself
-- with one id without a limit could get past it.
DROP FUNCTION create_task(text, text, text, text, text, text, text, text[], text, bigint, bigint, text, integer);
DROP FUNCTION create_durable_task(text, text, text, text, text, text, text, text[], text, bigint, bigint, text, integer, jsonb, jsonb, boolean, integer);
DROP FUNCTION create_durable_task(text, text, text, text, text, text, text, text[], text, bigint, bigint, text, integer, jsonb, jsonb, boolean, integer, text);
DROP FUNCTION create_durable_task(text, text, text, text, text, text, text, text[], text, bigint, bigint, text, integer, jsonb, jsonb, boolean, integer, text, boolean, bigint, bigint);
DROP FUNCTION create_durable_tasks(text[], text[], text[], text[], text[], text[], text[], jsonb[], text[], bigint[], bigint[], text[], integer[], jsonb[], jsonb[], boolean[], integer[], text[], boolean[], bigint[], bigint[]);

-- create_task() of migration 0003 (the release before durable work).
CREATE FUNCTION create_task(
  p_id               text,
  p_owner_subject    text,
  p_owner_server     text,
  p_owner_client_id  text,
  p_owner_resource   text,
  p_owner_key        text,
  p_tool             text,
  p_scopes           text[],
  p_status_message   text,
  p_ttl_ms           bigint,
  p_poll_interval_ms bigint,
  p_node_id          text,
  p_max_live         integer
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
      ttl_ms, expires_at, poll_interval_ms, node_id, expiry_key
    )
    SELECT p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
           p_tool, p_scopes, 'working', p_status_message, clock.created_at, clock.created_at,
           p_ttl_ms, clock.expires_at, p_poll_interval_ms, p_node_id, task_expiry_key(p_ttl_ms, clock.expires_at)
      FROM (SELECT date_trunc('milliseconds', now()) AS created_at,
                   date_trunc('milliseconds', now()) + p_ttl_ms * interval '1 millisecond' AS expires_at) AS clock
     WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE id = p_id)
    ON CONFLICT (id, expiry_key) DO NOTHING
    RETURNING *;
END;
$$;

-- create_durable_task() of migration 0012 (stored bytes), which the two older signatures below call.
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
      attempt, resumable, max_attempts, args, client_capabilities, trace_context, storage_pool, expiry_key
    )
    SELECT p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
            p_tool, p_scopes, 'working', p_status_message, v_created_at, v_created_at,
            p_ttl_ms, v_created_at + p_ttl_ms * interval '1 millisecond', p_poll_interval_ms, p_node_id,
            CASE WHEN p_node_id IS NULL THEN 0 ELSE 1 END, p_resumable, p_max_attempts, p_args, p_client_capabilities, p_trace_context,
            CASE WHEN p_max_stored_bytes IS NULL THEN NULL WHEN p_shared_storage THEN 'shared' ELSE 'owner' END,
            task_expiry_key(p_ttl_ms, v_created_at + p_ttl_ms * interval '1 millisecond')
     WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE id = p_id)
    ON CONFLICT (id, expiry_key) DO NOTHING
    RETURNING *;
END;
$$;

-- create_durable_task() of migration 0004: the one of 0012 without a trace context or a stored-bytes bound.
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
LANGUAGE sql VOLATILE
SET search_path FROM CURRENT
AS $$
  SELECT * FROM create_durable_task(p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
                 p_tool, p_scopes, p_status_message, p_ttl_ms, p_poll_interval_ms, p_node_id, p_max_live,
                 p_args, p_client_capabilities, p_resumable, p_max_attempts,
                 NULL::text, false, NULL::bigint, NULL::bigint)
$$;

-- create_durable_task() of migration 0011: the one of 0012 without a stored-bytes bound.
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
  p_trace_context       text
) RETURNS SETOF tasks
LANGUAGE sql VOLATILE
SET search_path FROM CURRENT
AS $$
  SELECT * FROM create_durable_task(p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
                 p_tool, p_scopes, p_status_message, p_ttl_ms, p_poll_interval_ms, p_node_id, p_max_live,
                 p_args, p_client_capabilities, p_resumable, p_max_attempts,
                 p_trace_context, false, NULL::bigint, NULL::bigint)
$$;

-- create_durable_tasks() of migration 0022 (group commit).
CREATE FUNCTION create_durable_tasks(
  p_ids                  text[],
  p_owner_subjects       text[],
  p_owner_servers        text[],
  p_owner_client_ids     text[],
  p_owner_resources      text[],
  p_owner_keys           text[],
  p_tools                text[],
  p_scopes               jsonb[],
  p_status_messages      text[],
  p_ttl_ms               bigint[],
  p_poll_interval_ms     bigint[],
  p_node_ids             text[],
  p_max_live             integer[],
  p_args                 jsonb[],
  p_client_capabilities  jsonb[],
  p_resumable            boolean[],
  p_max_attempts         integer[],
  p_trace_contexts       text[],
  p_shared_storage       boolean[],
  p_stored_bytes         bigint[],
  p_max_stored_bytes     bigint[]
) RETURNS TABLE (n integer, refusal text, detail text, created tasks)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  r            record;
  live         integer;
  kept         bigint;
  frees_at     timestamptz;
  pool_key     text;
  v_created_at timestamptz := date_trunc('milliseconds', now());
  v_expires_at timestamptz;
  v_shard      smallint := floor(random() * 8)::smallint;
  charge_keys    text[] := '{}';
  charge_buckets timestamptz[] := '{}';
  charge_bytes   bigint[] := '{}';
BEGIN
  FOR r IN
    SELECT u.*
      FROM unnest(p_ids, p_owner_subjects, p_owner_servers, p_owner_client_ids, p_owner_resources, p_owner_keys,
                  p_tools, p_scopes, p_status_messages, p_ttl_ms, p_poll_interval_ms, p_node_ids, p_max_live,
                  p_args, p_client_capabilities, p_resumable, p_max_attempts, p_trace_contexts,
                  p_shared_storage, p_stored_bytes, p_max_stored_bytes)
           WITH ORDINALITY AS u(id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
                                tool, scopes, status_message, ttl_ms, poll_interval_ms, node_id, max_live,
                                args, client_capabilities, resumable, max_attempts, trace_context,
                                shared_storage, stored_bytes, max_stored_bytes, ord)
     ORDER BY hashtextextended(u.owner_key, 0), u.ord
  LOOP
    n := r.ord;
    refusal := NULL;
    detail := NULL;
    created := NULL;
    v_expires_at := v_created_at + r.ttl_ms * interval '1 millisecond';
    IF r.max_live IS NOT NULL THEN
      PERFORM pg_advisory_xact_lock(hashtextextended(r.owner_key, 0));
      SELECT count(*) INTO live
        FROM tasks
       WHERE owner_key = r.owner_key
         AND status IN ('working', 'input_required')
         AND (expires_at IS NULL OR expires_at > now());
      IF live >= r.max_live THEN
        refusal := 'MTQ01';
        detail := live::text;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    IF r.max_stored_bytes IS NOT NULL THEN
      -- charge_task_storage() (migration 0012), refusing in the result row instead of raising.
      pool_key := CASE WHEN r.shared_storage THEN '*' ELSE r.owner_key END;
      IF NOT r.shared_storage THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(pool_key, 0));
      END IF;
      SELECT coalesce(sum(bytes), 0), min(expires_by) INTO kept, frees_at
        FROM task_storage
       WHERE storage_key = pool_key AND expires_by > now();
      kept := kept + coalesce((SELECT sum(c.bytes) FROM unnest(charge_keys, charge_bytes) AS c(key, bytes) WHERE c.key = pool_key), 0);
      IF kept + r.stored_bytes > r.max_stored_bytes THEN
        refusal := 'MTQ02';
        detail := json_build_object(
          'kept', kept,
          'limit', r.max_stored_bytes,
          'freesInMs', CASE WHEN frees_at IS NULL OR frees_at = 'infinity' THEN NULL
                            ELSE ceil(extract(epoch FROM frees_at - now()) * 1000) END)::text;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    INSERT INTO tasks (
      id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
      tool, scopes, status, status_message, created_at, last_updated_at,
      ttl_ms, expires_at, poll_interval_ms, node_id,
      attempt, resumable, max_attempts, args, client_capabilities, trace_context, storage_pool, expiry_key
    )
    SELECT r.id, r.owner_subject, r.owner_server, r.owner_client_id, r.owner_resource, r.owner_key,
            r.tool, ARRAY(SELECT jsonb_array_elements_text(r.scopes)), 'working', r.status_message, v_created_at, v_created_at,
            r.ttl_ms, v_expires_at, r.poll_interval_ms, r.node_id,
            CASE WHEN r.node_id IS NULL THEN 0 ELSE 1 END, r.resumable, r.max_attempts, r.args, r.client_capabilities, r.trace_context,
            CASE WHEN r.max_stored_bytes IS NULL THEN NULL WHEN r.shared_storage THEN 'shared' ELSE 'owner' END,
            task_expiry_key(r.ttl_ms, v_expires_at)
     WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE id = r.id)
    ON CONFLICT (id, expiry_key) DO NOTHING
    RETURNING * INTO created;
    IF NOT FOUND THEN
      refusal := 'exists';
      created := NULL;
    ELSIF r.max_stored_bytes IS NOT NULL THEN
      charge_keys := charge_keys || pool_key;
      charge_buckets := charge_buckets || task_storage_bucket(v_expires_at);
      charge_bytes := charge_bytes || r.stored_bytes;
    END IF;
    RETURN NEXT;
  END LOOP;
  INSERT INTO task_storage (storage_key, expires_by, shard, bytes)
  SELECT c.key, c.bucket, CASE WHEN c.key = '*' THEN v_shard ELSE 0 END, sum(c.bytes)
    FROM unnest(charge_keys, charge_buckets, charge_bytes) AS c(key, bucket, bytes)
   GROUP BY c.key, c.bucket
   ORDER BY c.key, c.bucket
  ON CONFLICT (storage_key, expires_by, shard) DO UPDATE SET bytes = task_storage.bytes + EXCLUDED.bytes;
END;
$$;
