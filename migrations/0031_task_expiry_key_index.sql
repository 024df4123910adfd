-- What the cut-over (migration 0032) needs of today's table, prepared beside it: the unique index
-- that becomes its primary key as a partition (a partitioned table's key must hold the partition
-- key), and the proof that every row it holds belongs to the partition FROM ('infinity') TO
-- (MAXVALUE), so attaching it scans nothing. Every row reads 'infinity' (migration 0030's
-- default; the create functions write nothing else until the cut-over replaces them).
--
-- Both are idempotent, because on a large table they are best run by hand before the upgrade,
-- outside the runner's one transaction (which would hold the table's lock through the index build
-- and the validation's scan):
--   ALTER TABLE <schema>.tasks ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tasks_id_expiry_key_idx ON <schema>.tasks (id, expiry_key);
--   ALTER TABLE <schema>.tasks ADD CONSTRAINT tasks_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
--   ALTER TABLE <schema>.tasks VALIDATE CONSTRAINT tasks_expiry_key_unbounded;
-- (the VALIDATE takes a lock that lets reads and writes go on). Then migrations 0030 and 0031 find
-- them done.
CREATE UNIQUE INDEX IF NOT EXISTS tasks_id_expiry_key_idx ON tasks (id, expiry_key);

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                  WHERE conrelid = 'tasks'::regclass AND conname = 'tasks_expiry_key_unbounded') THEN
    ALTER TABLE tasks ADD CONSTRAINT tasks_expiry_key_unbounded CHECK (expiry_key = 'infinity') NOT VALID;
  END IF;
END;
$$;
-- A no-op when already validated.
ALTER TABLE tasks VALIDATE CONSTRAINT tasks_expiry_key_unbounded;
