-- The claim, index-driven, so its cost follows the owners waiting, not the length of the backlog.
-- Expand only: two new partial indexes, nothing dropped. A node of the previous release keeps
-- claiming with its own statement (it also claims a task waiting for input with no run, which
-- this release leaves alone until its answer comes: that node then holds the slot while waiting,
-- as before). tasks_claimable_idx (migration 0004) is unused by this release's claim; a later
-- release may drop it once no node of the previous one runs. Since this release, `handovers`
-- (0004) also counts runs that gave their task back while waiting for input: neither uses up an
-- attempt.

-- Claimable tasks (no run, work to do) by owner, oldest first: the skip scan over owners and each
-- owner's first few tasks.
CREATE INDEX tasks_claimable_work_idx ON tasks (owner_key, created_at, id)
  WHERE node_id IS NULL AND status = 'working';

-- Each owner's tasks that a run holds: the fairness count, which then reads only held rows of the
-- owner, never the owner's backlog.
CREATE INDEX tasks_held_owner_key_idx ON tasks (owner_key)
  WHERE node_id IS NOT NULL AND status IN ('working', 'input_required');
