-- Group commit of creates: create_durable_task() (migration 0012) for several tasks in one
-- statement, so the creates a node receives in one turn of its event loop share one round trip and
-- one commit. A row that cannot be created is refused in its own result row (`refusal`), never by
-- an exception, so it fails only its own request and the others still commit:
--   'MTQ01'  the owner is at its live-task limit;
--   'MTQ02'  the storage pool would keep more than its bound (`detail`: JSON kept, limit, freesInMs);
--   'exists' a task with this id already exists.
-- The rows are handled in the order of their owner's advisory lock key, then in the order given:
-- two batches take their owners' locks in one order (no deadlock between them), and each row sees
-- the rows inserted before it in the same statement, so two creates of one owner in one batch
-- count each other and the quota stays exact. Each result row carries its position in the arrays
-- (`n`, from 1). Expand only: earlier nodes keep calling create_durable_task().
--
-- The storage charges are not written row by row: they are summed per counter row and written
-- after the loop, in the order of the counter table's key, as finish_tasks does, and the shared
-- pool uses one shard for the whole statement. Written row by row (each on a random shard of the
-- shared pool), two batches locked the same counter rows in opposite orders and PostgreSQL broke
-- the deadlock after deadlock_timeout: a second of waiting and a batch retried row by row, which
-- made group commit slower than no batching at all (issue 30's end-to-end regression). A row's
-- check counts what the rows before it in the batch charged, so the bound stays what it was:
-- exact for an owner's pool (its advisory lock is held until the commit), approximate for the
-- shared one (it takes no lock).
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
      attempt, resumable, max_attempts, args, client_capabilities, trace_context, storage_pool
    )
    VALUES (r.id, r.owner_subject, r.owner_server, r.owner_client_id, r.owner_resource, r.owner_key,
            r.tool, ARRAY(SELECT jsonb_array_elements_text(r.scopes)), 'working', r.status_message, v_created_at, v_created_at,
            r.ttl_ms, v_expires_at, r.poll_interval_ms, r.node_id,
            CASE WHEN r.node_id IS NULL THEN 0 ELSE 1 END, r.resumable, r.max_attempts, r.args, r.client_capabilities, r.trace_context,
            CASE WHEN r.max_stored_bytes IS NULL THEN NULL WHEN r.shared_storage THEN 'shared' ELSE 'owner' END)
    ON CONFLICT (id) DO NOTHING
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
