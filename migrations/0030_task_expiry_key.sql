-- The key the task table is partitioned by (migration 0032): when a task's row may go, fixed when
-- it is created, so a finish, a cancel or a claim never moves a row between partitions. Not
-- expires_at itself: that is NULL for a task without TTL, and a partition key in the primary key
-- cannot be; nor 'infinity' written into expires_at, which a node of the previous release would
-- read as the number Infinity where it expects a Date. 'infinity' here means "in no hourly
-- partition": the row-wise sweep removes such a row once its expires_at passes, as before.
--
-- Expand only: a constant default adds the column without rewriting the table, every existing row
-- reads as 'infinity', and nothing a node of the previous release sends changes. IF NOT EXISTS:
-- an operator may add it by hand first (migration 0031 says why).
--
-- The runner applies every pending file in one transaction, and this is the first statement that
-- takes the table's ACCESS EXCLUSIVE lock, held to the commit: wait for it at most this long
-- (behind a long reader, say) instead of queueing every request behind the wait. The runner
-- retries the whole transaction when it gives up (SQLSTATE 55P03).
SET LOCAL lock_timeout = '2s';

ALTER TABLE tasks ADD COLUMN IF NOT EXISTS expiry_key timestamptz NOT NULL DEFAULT 'infinity';

-- How far ahead the hourly partitions reach: every hour from the current one up to
-- partitioned_until has its partition (the maintenance leader makes them ahead and only ever
-- drops hours gone by). A create routes a row to an hourly partition only below it, so no insert
-- can name a partition that does not exist; '-infinity' until the first partitions are made.
CREATE TABLE task_partition_horizon (
  -- A single row: the key can only be true.
  id                boolean     PRIMARY KEY DEFAULT true CHECK (id),
  partitioned_until timestamptz NOT NULL,
  -- The horizon before the last move, and when the last move is safe to use: a transaction begun
  -- before the move's commit may hold the table's partition list of before it (PostgreSQL reads a
  -- list of partitions again only when it takes a lock it did not hold), while its statements see
  -- the moved horizon; its insert would find no partition for its row. So a create uses
  -- partitioned_until only in a transaction begun after ready_at (set past the commit of the
  -- move), and previous_until before.
  previous_until    timestamptz NOT NULL DEFAULT '-infinity',
  ready_at          timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO task_partition_horizon (id, partitioned_until) VALUES (true, '-infinity');

-- The expiry_key a create writes. Only a task whose TTL is at least the width of a partition
-- (an hour) goes to an hourly partition: its row is then kept at most twice its TTL (until the end
-- of its expiry's hour). A shorter TTL would keep an expired row up to an hour past its expiry,
-- many times its life, so it stays in the 'infinity' partition and the row-wise sweep removes it
-- soon after it expires, as before. The horizon it goes by is one its transaction can see the
-- partitions of (ready_at, above): reading the latest horizon in the inserting statement's
-- snapshot was not enough, as a CI run showed ("no partition of relation "tasks" found for row",
-- a create at a node's start while the first round attached the hours ahead).
CREATE FUNCTION task_expiry_key(p_ttl_ms bigint, p_expires_at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
  SELECT CASE
           WHEN p_ttl_ms >= 3600000
                AND p_expires_at < (SELECT CASE WHEN ready_at <= now() THEN partitioned_until ELSE previous_until END
                                      FROM task_partition_horizon)
             THEN p_expires_at
           ELSE 'infinity'::timestamptz
         END
$$;
