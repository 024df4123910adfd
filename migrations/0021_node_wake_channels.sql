-- The NOTIFY channel each node instance LISTENs on for its own wake-ups (a cancel or an answer of a
-- task it runs), beside the schema's broadcast channel: a control action then wakes the one node
-- concerned instead of every node of the cluster (before PostgreSQL 19 a NOTIFY wakes every
-- listening backend, and each node parses and drops what is not its own). NULL: the node hears
-- only the broadcast channel (a node of an earlier release, or one without a listener), so the
-- senders fall back to the broadcast for it. Expand only: earlier nodes neither write nor read it.
ALTER TABLE nodes ADD COLUMN wake_channel text;
