-- What a proxied task's history shows of the upstream cancel it owed (the console's task history
-- reads upstream_cancels beside its own events): requested (created_at), each attempt's time
-- (last_attempt_at, with attempts counting them), the last error of a failed or refused attempt
-- (last_error, kept after the cancel settles), and when it settled and how (settled_at, state:
-- acknowledged by the upstream, ended because the upstream task was already gone, abandoned).
-- Expand only: a node of the previous release leaves last_attempt_at empty.
ALTER TABLE upstream_cancels ADD COLUMN last_attempt_at timestamptz;
-- Whose upstream credential made the upstream task (the gateway caller's subject, when callers stay
-- apart upstream), so that any node cancels it as that owner; null: the gateway's own. Never a token.
ALTER TABLE upstream_cancels ADD COLUMN upstream_subject text;

COMMENT ON COLUMN upstream_cancels.created_at IS 'when the gateway recorded the cancel as owed (the cancel was requested)';
COMMENT ON COLUMN upstream_cancels.last_attempt_at IS 'when a node last sent the cancel upstream (attempts counts the sends)';
COMMENT ON COLUMN upstream_cancels.last_error IS 'why the last failed attempt failed (a busy upstream included); kept once settled';
COMMENT ON COLUMN upstream_cancels.settled_at IS 'when the cancel stopped being owed: acknowledged, ended or abandoned (state)';
