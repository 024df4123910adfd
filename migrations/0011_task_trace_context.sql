-- The trace context of the request that created a task (its `tools/call` span, as a W3C
-- traceparent), so that a run claimed on another node and the later requests on the task join
-- that trace. Expand-only: a nullable column, and an overload of create_durable_task() with one
-- more argument; nodes of the previous release keep calling the old one (and store no context).
ALTER TABLE tasks ADD COLUMN trace_context text;

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
      attempt, resumable, max_attempts, args, client_capabilities, trace_context
    )
    SELECT p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
           p_tool, p_scopes, 'working', p_status_message, clock.created_at, clock.created_at,
           p_ttl_ms, clock.created_at + p_ttl_ms * interval '1 millisecond', p_poll_interval_ms, p_node_id,
           CASE WHEN p_node_id IS NULL THEN 0 ELSE 1 END, p_resumable, p_max_attempts, p_args, p_client_capabilities, p_trace_context
      FROM (SELECT date_trunc('milliseconds', now()) AS created_at) AS clock
    ON CONFLICT (id) DO NOTHING
    RETURNING *;
END;
$$;
