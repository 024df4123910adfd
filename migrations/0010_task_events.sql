-- A task's history: one row per change an operator asks about (created, claimed, released,
-- input asked and answered, the terminal status with its error) and per operator action (who,
-- when, what). Written by a trigger in the transaction of the change it records, so every write
-- path records without knowing of it; operator actions are appended by the operator's own
-- statements. Gone with its task (ON DELETE CASCADE: the sweeper's delete takes it along).
-- Expand only: a node of the previous release writes tasks as before and the trigger records it.
CREATE TABLE task_events (
  task_id text        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  seq     bigint      GENERATED ALWAYS AS IDENTITY,
  at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind    text        NOT NULL
          CONSTRAINT task_events_kind_check
          CHECK (kind IN ('created', 'claimed', 'released', 'input_requested', 'input_answered',
                          'input_required', 'working', 'completed', 'failed', 'cancelled', 'operator')),
  -- The row after the change: its status, the node that held it, the run's attempt.
  status  text        NOT NULL,
  node_id text,
  attempt integer     NOT NULL,
  -- What the kind needs: the input's key, a release's reason, a failure's code and message, an
  -- operator's identity and action. Never the owner's data (arguments, answers, results).
  detail  jsonb,
  PRIMARY KEY (task_id, seq)
);

-- Bounds, so a task that asks a thousand questions or is parked a thousand times keeps a history
-- of fixed size: the input events of the newest 50 keys, the claims and releases of the newest
-- 50 attempts, the newest 50 operator actions. The tasks row itself says how many there were
-- (cardinality(input_keys), attempt), so what was coalesced is still counted.
CREATE FUNCTION record_task_event() RETURNS trigger
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
    INSERT INTO task_events (task_id, kind, status, node_id, attempt)
    VALUES (NEW.id, 'created', NEW.status, NEW.node_id, NEW.attempt);
    RETURN NULL;
  END IF;

  IF NEW.attempt <> OLD.attempt THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt)
    VALUES (NEW.id, 'claimed', NEW.status, NEW.node_id, NEW.attempt);
    IF NEW.attempt > kept_attempts THEN
      DELETE FROM task_events
       WHERE task_id = NEW.id AND kind IN ('claimed', 'released') AND attempt <= NEW.attempt - kept_attempts;
    END IF;
  ELSIF NEW.node_id IS NULL AND OLD.node_id IS NOT NULL AND NEW.status IN ('working', 'input_required') THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail)
    VALUES (NEW.id, 'released', NEW.status, NULL, NEW.attempt,
            jsonb_build_object('from', OLD.node_id, 'message', left(NEW.status_message, 500)));
  END IF;

  n := cardinality(NEW.input_keys);
  IF n > cardinality(OLD.input_keys) THEN
    FOR i IN cardinality(OLD.input_keys) + 1 .. n LOOP
      INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail)
      VALUES (NEW.id, 'input_requested', NEW.status, NEW.node_id, NEW.attempt, jsonb_build_object('key', NEW.input_keys[i]));
    END LOOP;
    input_event := true;
    IF n > kept_keys THEN
      DELETE FROM task_events
       WHERE task_id = NEW.id AND kind IN ('input_requested', 'input_answered')
         AND detail->>'key' = ANY (NEW.input_keys[1 : n - kept_keys]);
    END IF;
  ELSIF NEW.inputs IS DISTINCT FROM OLD.inputs THEN
    -- An answer: the keys whose response appeared in this update (of the kept window only).
    FOREACH k IN ARRAY NEW.input_keys[greatest(1, n - kept_keys + 1) : n] LOOP
      IF NEW.inputs->k ? 'response' AND NOT coalesce(OLD.inputs->k ? 'response', false) THEN
        INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail)
        VALUES (NEW.id, 'input_answered', NEW.status, NEW.node_id, NEW.attempt, jsonb_build_object('key', k));
        input_event := true;
      END IF;
    END LOOP;
  END IF;

  -- Between working and input_required an input event says it already (and is bounded with its
  -- key); a terminal status is written once.
  IF NEW.status <> OLD.status AND NOT (input_event AND NEW.status IN ('working', 'input_required')) THEN
    INSERT INTO task_events (task_id, kind, status, node_id, attempt, detail)
    VALUES (NEW.id, NEW.status, NEW.status, NEW.node_id, NEW.attempt,
            CASE
              WHEN NEW.status = 'failed' AND NEW.error IS NOT NULL
                THEN jsonb_build_object('code', NEW.error->'code', 'message', left(NEW.error->>'message', 500))
              WHEN NEW.status = 'completed'
                THEN jsonb_build_object('toolError', coalesce(NEW.result->'isError' = 'true'::jsonb, false))
              WHEN NEW.status = 'cancelled'
                THEN jsonb_build_object('message', left(NEW.status_message, 500))
            END);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_record_created
  AFTER INSERT ON tasks
  FOR EACH ROW EXECUTE FUNCTION record_task_event();

-- Only the changes the history keeps: a progress message, a follow or a touch records nothing.
CREATE TRIGGER tasks_record_changed
  AFTER UPDATE ON tasks
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR OLD.attempt IS DISTINCT FROM NEW.attempt
        OR OLD.node_id IS DISTINCT FROM NEW.node_id
        OR OLD.input_keys IS DISTINCT FROM NEW.input_keys
        OR OLD.inputs IS DISTINCT FROM NEW.inputs)
  EXECUTE FUNCTION record_task_event();
