-- The oldest live task of each tool, so an alert can hold each tool to its own expected time
-- (mcp_tasks_oldest_live_task_age_seconds{gen_ai_tool_name}): {"computedAt": <the round's
-- computed_at>, "tools": {"<tool>": <created_at of its oldest live unexpired task>}}. A node of the
-- previous release computes the row without touching this column, so a reader uses it only when
-- its computedAt is the row's computed_at (written by the same round). Expand only.
ALTER TABLE cluster_stats ADD COLUMN oldest_live_by_tool jsonb;
