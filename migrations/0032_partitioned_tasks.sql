-- The cut-over: `tasks` becomes a table partitioned by expiry_key (migration 0030), so that the
-- sweeper drops a whole hour of expired tasks at once (no dead rows, no vacuum, no index entries
-- left behind) instead of deleting them one by one. Same name, same columns in the same order, so
-- the previous release's statements (a prepared `SELECT *` included: the rename invalidates it and
-- it is planned again by name, on the new table, with the same result type) keep working.
--
-- Today's table becomes the partition FROM ('infinity') TO (MAXVALUE), `tasks_unbounded`: it keeps
-- every row of before the cut-over and, from now on, the tasks no hourly partition takes (no TTL,
-- a TTL under an hour, an expiry beyond the hours made ahead); the row-wise sweep goes on there.
-- Not a DEFAULT partition: with one, every hourly partition attached later would have to prove
-- (by a scan of the DEFAULT under an exclusive lock, or a constraint rewritten each hour) that the
-- DEFAULT holds none of its rows, and PostgreSQL refuses DETACH ... CONCURRENTLY while one exists.
--
-- Cheap under the lock migration 0030 took: catalog changes only. The index 0031 built becomes the
-- key, and 0031's validated constraint proves the attach without a scan.

-- Foreign keys to tasks (id) go: a key referencing a partitioned table must hold its partition
-- key, and each detach would then scan the referencing table. Their ON DELETE CASCADE becomes the
-- statement trigger below (row-wise deletes) and the sweeper's delete of a partition's steps and
-- events before it drops the partition.
ALTER TABLE task_steps DROP CONSTRAINT task_steps_task_id_fkey;
ALTER TABLE task_events DROP CONSTRAINT task_events_task_id_fkey;

-- A partition has the parent's key, and one key only.
ALTER TABLE tasks DROP CONSTRAINT tasks_pkey;
ALTER TABLE tasks ADD CONSTRAINT tasks_unbounded_pkey PRIMARY KEY USING INDEX tasks_id_expiry_key_idx;

-- The parent's triggers are cloned onto every partition, this one included, when it is attached.
DROP TRIGGER tasks_record_created ON tasks;
DROP TRIGGER tasks_record_changed ON tasks;

ALTER TABLE tasks RENAME TO tasks_unbounded;
-- Its indexes free their names for the parent's, to which the attach binds them (no rebuild).
ALTER INDEX tasks_expires_at_idx RENAME TO tasks_unbounded_expires_at_idx;
ALTER INDEX tasks_live_owner_key_idx RENAME TO tasks_unbounded_live_owner_key_idx;
ALTER INDEX tasks_live_node_id_idx RENAME TO tasks_unbounded_live_node_id_idx;
ALTER INDEX tasks_claimable_idx RENAME TO tasks_unbounded_claimable_idx;
ALTER INDEX tasks_claimable_work_idx RENAME TO tasks_unbounded_claimable_work_idx;
ALTER INDEX tasks_held_owner_key_idx RENAME TO tasks_unbounded_held_owner_key_idx;
ALTER INDEX tasks_owner_list_idx RENAME TO tasks_unbounded_owner_list_idx;

CREATE TABLE tasks (LIKE tasks_unbounded INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (expiry_key);
-- 0031's proof is the unbounded partition's own, not every partition's.
ALTER TABLE tasks DROP CONSTRAINT tasks_expiry_key_unbounded;

-- A lookup by id probes each partition's key (one index scan per partition: the hours kept plus
-- the unbounded one). Ids carry 144 random bits, so an id is unique in practice, which is all the
-- old key's uniqueness was for (a retried create conflicts on the same (id, expiry_key)).
ALTER TABLE tasks ADD CONSTRAINT tasks_pkey PRIMARY KEY (id, expiry_key);
-- The indexes of migrations 0001 to 0007, for every partition.
CREATE INDEX tasks_expires_at_idx ON tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX tasks_live_owner_key_idx ON tasks (owner_key) WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_live_node_id_idx ON tasks (node_id) WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_claimable_idx ON tasks (owner_key, created_at, id)
  WHERE node_id IS NULL AND status IN ('working', 'input_required');
CREATE INDEX tasks_claimable_work_idx ON tasks (owner_key, created_at, id)
  WHERE node_id IS NULL AND status = 'working';
CREATE INDEX tasks_held_owner_key_idx ON tasks (owner_key)
  WHERE node_id IS NOT NULL AND status IN ('working', 'input_required');
CREATE INDEX tasks_owner_list_idx ON tasks (owner_key, created_at DESC, id COLLATE "C" DESC);

-- The history (migration 0010), on every partition.
CREATE TRIGGER tasks_record_created
  AFTER INSERT ON tasks
  FOR EACH ROW EXECUTE FUNCTION record_task_event();
CREATE TRIGGER tasks_record_changed
  AFTER UPDATE ON tasks
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR OLD.attempt IS DISTINCT FROM NEW.attempt
        OR OLD.node_id IS DISTINCT FROM NEW.node_id
        OR OLD.input_keys IS DISTINCT FROM NEW.input_keys
        OR OLD.inputs IS DISTINCT FROM NEW.inputs)
  EXECUTE FUNCTION record_task_event();

-- The foreign keys' cascade, once per statement: a row-wise delete of tasks (this release's
-- sweep of the unbounded partition, a previous release's sweep of the whole table) takes the
-- deleted tasks' steps and events with it, in the same statement, by their keys' first column.
CREATE FUNCTION delete_task_children() RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  DELETE FROM task_steps WHERE task_id IN (SELECT id FROM gone);
  DELETE FROM task_events WHERE task_id IN (SELECT id FROM gone);
  RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_delete_children
  AFTER DELETE ON tasks
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION delete_task_children();

ALTER TABLE tasks ATTACH PARTITION tasks_unbounded FOR VALUES FROM ('infinity') TO (MAXVALUE);
ALTER TABLE tasks_unbounded DROP CONSTRAINT tasks_expiry_key_unbounded;

-- An hourly partition, [p_from, p_from + 1 hour) in UTC hours, named tasks_pYYYYMMDDHH; made ahead
-- by the maintenance leader (TaskPartitioner), and a no-op when it exists. Made empty beside the
-- table and then attached, which takes a SHARE UPDATE EXCLUSIVE lock on `tasks` (reads and writes
-- go on; CREATE TABLE ... PARTITION OF would take an exclusive one). Then the horizon moves: to
-- the partition's end when it starts within the run of hours already covered (or at the current
-- hour, which starts a run). SECURITY DEFINER: a node's role has DML on the tables, not their
-- ownership, which DDL needs; it can only make hourly partitions of this table.
CREATE FUNCTION make_task_partition(p_from timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
  v_from  timestamptz := date_trunc('hour', p_from, 'UTC');
  v_until timestamptz := date_trunc('hour', p_from, 'UTC') + interval '1 hour';
  v_name  text := 'tasks_p' || to_char(date_trunc('hour', p_from, 'UTC') AT TIME ZONE 'UTC', 'YYYYMMDDHH24');
  v_made  boolean := false;
BEGIN
  IF to_regclass(format('%I.%I', current_schema(), v_name)) IS NULL THEN
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.tasks INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   current_schema(), v_name, current_schema());
    -- Rows churn (created, updated a few times): vacuum on a count of dead rows, as migration 0001 set.
    EXECUTE format('ALTER TABLE %I.%I SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100)',
                   current_schema(), v_name);
    EXECUTE format('ALTER TABLE %I.tasks ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                   current_schema(), current_schema(), v_name, v_from, v_until);
    v_made := true;
  END IF;
  -- ready_at: a second past now, so past this transaction's commit (the round that calls this
  -- commits right after it); previous_until keeps the last horizon that was ready. Creates go by
  -- the horizon before for that second (migration 0030).
  UPDATE task_partition_horizon
     SET previous_until = CASE WHEN ready_at <= now() THEN partitioned_until ELSE previous_until END,
         partitioned_until = v_until,
         ready_at = clock_timestamp() + interval '1 second'
   WHERE partitioned_until < v_until
     AND (partitioned_until >= v_from OR v_from <= now());
  RETURN v_made;
END;
$$;

-- Detaches and drops the hourly partition p_name when its hour has ended (every row in it has
-- expired, by construction), under the caller's lock_timeout: the plain detach takes an exclusive
-- lock on `tasks` for a moment. The sweeper deletes the partition's steps and events first.
-- Returns false, changing nothing, for anything else. SECURITY DEFINER as make_task_partition().
CREATE FUNCTION drop_task_partition(p_name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
  IF p_name !~ '^tasks_p[0-9]{10}$'
     OR to_timestamp(substr(p_name, 8) || '+00', 'YYYYMMDDHH24TZH') + interval '1 hour' > now()
     OR NOT EXISTS (SELECT 1 FROM pg_inherits
                     WHERE inhparent = format('%I.tasks', current_schema())::regclass
                       AND inhrelid = to_regclass(format('%I.%I', current_schema(), p_name))) THEN
    RETURN false;
  END IF;
  EXECUTE format('ALTER TABLE %I.tasks DETACH PARTITION %I.%I', current_schema(), current_schema(), p_name);
  EXECUTE format('DROP TABLE %I.%I', current_schema(), p_name);
  RETURN true;
END;
$$;
