-- The step journal and the history partitioned as the tasks are (migration 0032), by the same
-- key, so the sweeper drops an ended hour's steps and events partitions with its tasks' instead
-- of deleting them row by row first: the journal
-- and the history, like the task table, grow with live work and not with what has expired.
--
-- Each row carries its task's expiry_key, fixed when the task is created, so a row never moves.
-- Who writes it: the history trigger (NEW.expiry_key, below) for every release's task writes; this
-- release's step starts and operator actions, from the task row they already read. The release
-- before durable work (0.1.0, test/fixtures/previous-release-statements.ts) writes neither table
-- itself, so nothing it sends changes; the statements of the releases since were never released.
--
-- The shape of 0030 to 0032 in one file: the key with a constant default (no rewrite), a unique
-- index holding it and a validated proof that every row reads 'infinity', then a cut-over of
-- catalog changes: each table renamed to *_unbounded and attached to a partitioned parent of the
-- same name, columns and defaults. Steps and events of tasks already in an hourly partition then
-- move to the hour's partition. On a large journal, run the expand part by hand first (outside
-- the runner's one transaction, which would hold the tables' locks through the build and the scan):
--   ALTER TABLE <schema>.task_steps ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';
--   ALTER TABLE <schema>.task_events ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS task_steps_key_expiry_key_idx ON <schema>.task_steps (task_id, name, expiry_key);
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS task_events_key_expiry_key_idx ON <schema>.task_events (task_id, seq, expiry_key);
--   ALTER TABLE <schema>.task_steps ADD CONSTRAINT task_steps_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
--   ALTER TABLE <schema>.task_steps VALIDATE CONSTRAINT task_steps_expiry_key_unbounded;
--   ALTER TABLE <schema>.task_events ADD CONSTRAINT task_events_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
--   ALTER TABLE <schema>.task_events VALIDATE CONSTRAINT task_events_expiry_key_unbounded;
SET LOCAL lock_timeout = '2s';

-- In the writers' order (a task write records its event; a step start reads its task first).
LOCK TABLE task_steps, task_events IN ACCESS EXCLUSIVE MODE;

ALTER TABLE task_steps ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';
ALTER TABLE task_events ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';
CREATE UNIQUE INDEX IF NOT EXISTS task_steps_key_expiry_key_idx ON task_steps (task_id, name, expiry_key);
CREATE UNIQUE INDEX IF NOT EXISTS task_events_key_expiry_key_idx ON task_events (task_id, seq, expiry_key);
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'task_steps'::regclass AND conname = 'task_steps_expiry_key_unbounded') THEN
    ALTER TABLE task_steps ADD CONSTRAINT task_steps_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'task_events'::regclass AND conname = 'task_events_expiry_key_unbounded') THEN
    ALTER TABLE task_events ADD CONSTRAINT task_events_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
  END IF;
END;
$$;
ALTER TABLE task_steps VALIDATE CONSTRAINT task_steps_expiry_key_unbounded;
ALTER TABLE task_events VALIDATE CONSTRAINT task_events_expiry_key_unbounded;

-- seq becomes a plain bigint drawn from a sequence: before PostgreSQL 17 a partitioned table
-- cannot have an identity column. Each sequence goes on from where its identity stopped, so the
-- order holds. An identity column let any role that may insert draw from its sequence; USAGE to
-- PUBLIC keeps that (a role that cannot reach the schema cannot name them either), so a node's
-- role needs no new grant (docs/security.md grants tables and functions). Not a SECURITY DEFINER
-- function as the default: its call (a security context switch and the function's search_path
-- set and reset for every row) made each insert 2.5 times as slow (100 000 inserts into a
-- partitioned table through a plpgsql loop: 2.3 s with it, 1.0-1.1 s with nextval, 0.8-0.9 s into
-- an unpartitioned table with an identity), and bench scenario 2's store 20-25 % slower.
CREATE SEQUENCE task_step_seq AS bigint;
CREATE SEQUENCE task_event_seq AS bigint;
SELECT setval('task_step_seq', coalesce(pg_sequence_last_value(pg_get_serial_sequence('task_steps', 'seq')::regclass), 0) + 1, false);
SELECT setval('task_event_seq', coalesce(pg_sequence_last_value(pg_get_serial_sequence('task_events', 'seq')::regclass), 0) + 1, false);
GRANT USAGE ON SEQUENCE task_step_seq, task_event_seq TO PUBLIC;
ALTER TABLE task_steps ALTER COLUMN seq DROP IDENTITY;
ALTER TABLE task_events ALTER COLUMN seq DROP IDENTITY;

-- The cut-over. A partition has the parent's key, and one key only.
ALTER TABLE task_steps DROP CONSTRAINT task_steps_pkey;
ALTER TABLE task_steps ADD CONSTRAINT task_steps_unbounded_pkey PRIMARY KEY USING INDEX task_steps_key_expiry_key_idx;
ALTER TABLE task_steps RENAME TO task_steps_unbounded;
CREATE TABLE task_steps (LIKE task_steps_unbounded INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (expiry_key);
ALTER TABLE task_steps DROP CONSTRAINT task_steps_expiry_key_unbounded;
ALTER TABLE task_steps ALTER COLUMN seq SET DEFAULT nextval('task_step_seq');
ALTER TABLE task_steps ADD CONSTRAINT task_steps_pkey PRIMARY KEY (task_id, name, expiry_key);
ALTER SEQUENCE task_step_seq OWNED BY task_steps.seq;
ALTER TABLE task_steps ATTACH PARTITION task_steps_unbounded FOR VALUES FROM ('infinity') TO (MAXVALUE);
ALTER TABLE task_steps_unbounded DROP CONSTRAINT task_steps_expiry_key_unbounded;

ALTER TABLE task_events DROP CONSTRAINT task_events_pkey;
ALTER TABLE task_events ADD CONSTRAINT task_events_unbounded_pkey PRIMARY KEY USING INDEX task_events_key_expiry_key_idx;
ALTER TABLE task_events RENAME TO task_events_unbounded;
CREATE TABLE task_events (LIKE task_events_unbounded INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (expiry_key);
ALTER TABLE task_events DROP CONSTRAINT task_events_expiry_key_unbounded;
ALTER TABLE task_events ALTER COLUMN seq SET DEFAULT nextval('task_event_seq');
ALTER TABLE task_events ADD CONSTRAINT task_events_pkey PRIMARY KEY (task_id, seq, expiry_key);
ALTER SEQUENCE task_event_seq OWNED BY task_events.seq;
ALTER TABLE task_events ATTACH PARTITION task_events_unbounded FOR VALUES FROM ('infinity') TO (MAXVALUE);
ALTER TABLE task_events_unbounded DROP CONSTRAINT task_events_expiry_key_unbounded;

-- An hourly partition of each of the three tables, [p_from, p_from + 1 hour) in UTC hours, named
-- tasks_pYYYYMMDDHH, task_steps_pYYYYMMDDHH and task_events_pYYYYMMDDHH: each made when missing,
-- empty beside its table and then attached (a SHARE UPDATE EXCLUSIVE lock: reads and writes go
-- on). Then the horizon moves as in migration 0032. The three are made in one transaction, so a
-- create routed to an hour finds its steps' and events' partitions too (attaching takes no lock
-- that waits for a reader or a writer).
CREATE OR REPLACE FUNCTION make_task_partition(p_from timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
  v_from   timestamptz := date_trunc('hour', p_from, 'UTC');
  v_until  timestamptz := date_trunc('hour', p_from, 'UTC') + interval '1 hour';
  v_suffix text := '_p' || to_char(date_trunc('hour', p_from, 'UTC') AT TIME ZONE 'UTC', 'YYYYMMDDHH24');
  v_parent text;
  v_made   boolean := false;
BEGIN
  FOREACH v_parent IN ARRAY ARRAY['tasks', 'task_steps', 'task_events'] LOOP
    IF to_regclass(format('%I.%I', current_schema(), v_parent || v_suffix)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                     current_schema(), v_parent || v_suffix, current_schema(), v_parent);
      -- Rows churn (created, updated a few times): vacuum on a count of dead rows, as migration 0001 set.
      EXECUTE format('ALTER TABLE %I.%I SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100)',
                     current_schema(), v_parent || v_suffix);
      EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                     current_schema(), v_parent, current_schema(), v_parent || v_suffix, v_from, v_until);
      v_made := v_made OR v_parent = 'tasks';
    END IF;
  END LOOP;
  UPDATE task_partition_horizon
     SET previous_until = CASE WHEN ready_at <= now() THEN partitioned_until ELSE previous_until END,
         partitioned_until = v_until,
         ready_at = clock_timestamp() + interval '1 second'
   WHERE partitioned_until < v_until
     AND (partitioned_until >= v_from OR v_from <= now());
  RETURN v_made;
END;
$$;

-- Detaches and drops the hourly partition p_name of one of the three tables (tasks_pYYYYMMDDHH,
-- task_steps_pYYYYMMDDHH or task_events_pYYYYMMDDHH) when its hour has ended, under the caller's
-- lock_timeout (the plain detach takes an exclusive lock on the parent for a moment). One table
-- per call and so per transaction: a transaction holding one parent's exclusive lock while it
-- waits for another's could deadlock with a statement taking the two the other way round (a
-- step's write may lock task_steps before tasks; the history trigger, tasks before
-- task_events). Every row of an ended hour has expired, so the three need not leave at once: the
-- sweeper drops the steps and events first and the tasks last, and a tasks partition still listed
-- means its hour is not done. Returns false, changing nothing, for anything else. SECURITY
-- DEFINER as make_task_partition().
CREATE OR REPLACE FUNCTION drop_task_partition(p_name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
  v_parent text := substring(p_name FROM '^(tasks|task_steps|task_events)_p[0-9]{10}$');
BEGIN
  IF v_parent IS NULL
     OR to_timestamp(right(p_name, 10) || '+00', 'YYYYMMDDHH24TZH') + interval '1 hour' > now()
     OR NOT EXISTS (SELECT 1 FROM pg_inherits
                     WHERE inhparent = format('%I.%I', current_schema(), v_parent)::regclass
                       AND inhrelid = to_regclass(format('%I.%I', current_schema(), p_name))) THEN
    RETURN false;
  END IF;
  EXECUTE format('ALTER TABLE %I.%I DETACH PARTITION %I.%I', current_schema(), v_parent, current_schema(), p_name);
  EXECUTE format('DROP TABLE %I.%I', current_schema(), p_name);
  RETURN true;
END;
$$;

-- The hours already made get their steps' and events' partitions.
SELECT make_task_partition(to_timestamp(substr(c.relname, 8) || '+00', 'YYYYMMDDHH24TZH'))
  FROM pg_inherits AS i
  JOIN pg_class AS c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'tasks'::regclass
   AND c.relname ~ '^tasks_p[0-9]{10}$';

-- What was written before for tasks of an hourly partition goes to the hour's partition (bounded
-- by live work: only tasks of an hour or more, within the hours made ahead). `< 'infinity'` prunes
-- the scan of tasks to the hourly partitions.
WITH moved AS (
  DELETE FROM task_steps_unbounded AS s
   USING tasks AS t
   WHERE t.id = s.task_id AND t.expiry_key < 'infinity'
  RETURNING s.task_id, s.name, s.seq, s.starts, s.done, s.result, t.expiry_key
)
INSERT INTO task_steps (task_id, name, seq, starts, done, result, expiry_key)
SELECT task_id, name, seq, starts, done, result, expiry_key FROM moved;

WITH moved AS (
  DELETE FROM task_events_unbounded AS e
   USING tasks AS t
   WHERE t.id = e.task_id AND t.expiry_key < 'infinity'
  RETURNING e.task_id, e.seq, e.at, e.kind, e.status, e.node_id, e.attempt, e.detail, t.expiry_key
)
INSERT INTO task_events (task_id, seq, at, kind, status, node_id, attempt, detail, expiry_key)
SELECT task_id, seq, at, kind, status, node_id, attempt, detail, expiry_key FROM moved;

-- The history trigger of migration 0010, writing each event with its task's key (and finding
-- the events it bounds in the task's partition).
CREATE OR REPLACE FUNCTION record_task_event() RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  kept_keys     constant integer := 50;
  kept_attempts constant integer := 50;
  n             integer;
  k             text;
  input_event   boolean := false;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, expiry_key)
    VALUES (NEW.id, 'created', NEW.status, NEW.node_id, NEW.attempt, NEW.expiry_key);
    RETURN NULL;
  END IF;

  IF NEW.attempt <> OLD.attempt THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, expiry_key)
    VALUES (NEW.id, 'claimed', NEW.status, NEW.node_id, NEW.attempt, NEW.expiry_key);
    IF NEW.attempt > kept_attempts THEN
      DELETE FROM task_events
       WHERE task_id = NEW.id AND expiry_key = NEW.expiry_key
         AND kind IN ('claimed', 'released') AND attempt <= NEW.attempt - kept_attempts;
    END IF;
  ELSIF NEW.node_id IS NULL AND OLD.node_id IS NOT NULL AND NEW.status IN ('working', 'input_required') THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail, expiry_key)
    VALUES (NEW.id, 'released', NEW.status, NULL, NEW.attempt,
            jsonb_build_object('from', OLD.node_id, 'message', left(NEW.status_message, 500)), NEW.expiry_key);
  END IF;

  n := cardinality(NEW.input_keys);
  IF n > cardinality(OLD.input_keys) THEN
    FOR i IN cardinality(OLD.input_keys) + 1 .. n LOOP
      INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail, expiry_key)
      VALUES (NEW.id, 'input_requested', NEW.status, NEW.node_id, NEW.attempt, jsonb_build_object('key', NEW.input_keys[i]), NEW.expiry_key);
    END LOOP;
    input_event := true;
    IF n > kept_keys THEN
      DELETE FROM task_events
       WHERE task_id = NEW.id AND expiry_key = NEW.expiry_key AND kind IN ('input_requested', 'input_answered')
         AND detail->>'key' = ANY (NEW.input_keys[1 : n - kept_keys]);
    END IF;
  ELSIF NEW.inputs IS DISTINCT FROM OLD.inputs THEN
    -- An answer: the keys whose response appeared in this update (of the kept window only).
    FOREACH k IN ARRAY NEW.input_keys[greatest(1, n - kept_keys + 1) : n] LOOP
      IF NEW.inputs->k ? 'response' AND NOT coalesce(OLD.inputs->k ? 'response', false) THEN
        INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail, expiry_key)
        VALUES (NEW.id, 'input_answered', NEW.status, NEW.node_id, NEW.attempt, jsonb_build_object('key', k), NEW.expiry_key);
        input_event := true;
      END IF;
    END LOOP;
  END IF;

  -- Between working and input_required an input event says it already (and is bounded with its
  -- key); a terminal status is written once.
  IF NEW.status <> OLD.status AND NOT (input_event AND NEW.status IN ('working', 'input_required')) THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail, expiry_key)
    VALUES (NEW.id, NEW.status, NEW.status, NEW.node_id, NEW.attempt,
            CASE
              WHEN NEW.status = 'failed' AND NEW.error IS NOT NULL
                THEN jsonb_build_object('code', NEW.error->'code', 'message', left(NEW.error->>'message', 500))
              WHEN NEW.status = 'completed'
                THEN jsonb_build_object('toolError', coalesce(NEW.result->'isError' = 'true'::jsonb, false))
              WHEN NEW.status = 'cancelled'
                THEN jsonb_build_object('message', left(NEW.status_message, 500))
            END,
            NEW.expiry_key);
  END IF;
  RETURN NULL;
END;
$$;

-- The cascade of a row-wise delete of tasks (migration 0032), by each table's whole key prefix.
CREATE OR REPLACE FUNCTION delete_task_children() RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  DELETE FROM task_steps WHERE (task_id, expiry_key) IN (SELECT id, expiry_key FROM gone);
  DELETE FROM task_events WHERE (task_id, expiry_key) IN (SELECT id, expiry_key FROM gone);
  RETURN NULL;
END;
$$;
