-- When the leader last counted the finished tasks (completed, failed, cancelled) kept until their
-- TTL. Counting them is a scan of the cluster's whole history (7.7 s of a core over 10 million
-- rows, beyond the round's 5 s statement timeout), so a round counts the live tasks only (through
-- the live partial indexes) and carries the finished counts forward from the row; they are
-- counted again once this is older than the service's `finishedIntervalMs`. A node of the
-- previous release counts everything each round and leaves this as it was. Expand only.
ALTER TABLE cluster_stats ADD COLUMN finished_counted_at timestamptz;
