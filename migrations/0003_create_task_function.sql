-- Creating a task in one round trip. The quota check needs the owner's lock *before* the count,
-- and in READ COMMITTED a single statement's snapshot predates any lock it takes; a VOLATILE
-- PL/pgSQL function takes a fresh snapshot for each statement inside it, so lock, count and insert
-- run in order within the caller's one-statement transaction, and the lock is held until commit.
-- Without a limit (p_max_live NULL) it is a plain insert.
--
-- Returns the new row, or no row when the id is taken. Raises SQLSTATE MTQ01 when the owner
-- already has p_max_live live tasks.
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
      ttl_ms, expires_at, poll_interval_ms, node_id
    )
    SELECT p_id, p_owner_subject, p_owner_server, p_owner_client_id, p_owner_resource, p_owner_key,
           p_tool, p_scopes, 'working', p_status_message, clock.created_at, clock.created_at,
           p_ttl_ms, clock.created_at + p_ttl_ms * interval '1 millisecond', p_poll_interval_ms, p_node_id
      FROM (SELECT date_trunc('milliseconds', now()) AS created_at) AS clock
    ON CONFLICT (id) DO NOTHING
    RETURNING *;
END;
$$;
