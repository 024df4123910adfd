-- Whether each node's LISTEN connection works (true), or the node relies on polling alone because
-- LISTEN does not work on its connection, a transaction-mode pooler without a direct connection
-- string (false); NULL until its first renewal says. Written on each lease renewal, so
-- `mcp-tasks nodes` and the console show which nodes deliver cancels and answers only by the poll.
-- Expand only: a node of the previous release never writes it (NULL, shown as unknown).
ALTER TABLE nodes ADD COLUMN listening boolean;
