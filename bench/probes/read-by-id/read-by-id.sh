#!/bin/bash
# The statement of a read by id four ways (docs/scale-out.md, "Reads by id, in the hour their id
# names"): every partition probed (before), the id's hour as bounds in scalar subqueries, as typed
# parameters, and cast from text (built); then the batched read of 8 ids five ways: every
# partition (before), pruned at each row, the batch's span cast from text, and with the arrays'
# length hidden from the planner (a scalar subquery: the generic plan is kept), without and with
# the span (built; docs/scale-out.md, "Batched reads keep their generic plan"); then a status
# message's write of 8 tasks (one per client) probing every partition (before) and in the id's
# hour (built). pgbench -M prepared, 8 clients, 10 s each, two rounds. PLAN_CACHE_MODE=force_generic_plan runs them all with it.
#   bench/probes/read-by-id/read-by-id.sh HOURS_AHEAD [KEPT_ROWS]   (after npm run build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hours=${1:-3}; rows=${2:-0}
host=${PGHOST:-127.0.0.1}; user=${PGUSER:-postgres}
db=mcp_tasks_probe_read_by_id
psql -h "$host" -U "$user" -X -q -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql -h "$host" -U "$user" -X -q -c "DROP DATABASE IF EXISTS $db"' EXIT
IFS=$'\t' read -r id owner from to ids owners froms tos < <(node "$here/setup.mjs" "postgres://$user@$host:5432/$db" "$hours")
if [ "$rows" -gt 0 ]; then
  # Finished tasks of 1 000 owners expiring over the next two hours (bench scenario 23's history).
  psql -h "$host" -U "$user" -X -q -d $db \
    -c "INSERT INTO mcp_tasks.tasks (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status, created_at, last_updated_at, ttl_ms, expires_at, expiry_key, poll_interval_ms, result, node_id)
        SELECT 'history-' || i, 'owner-' || (i % 1000), 'bench', 'client', '', '[\"owner-' || (i % 1000) || '\",\"bench\",\"client\",\"\"]', 'slow_compute', 'completed',
               e - interval '1 hour', e - interval '1 hour', 3600000, e, e, 1000, '{\"content\":[]}', 'probe'
          FROM generate_series(1, $rows) AS i,
               LATERAL (SELECT date_trunc('milliseconds', now()) + interval '5 minutes' + (i % 6000) * interval '1 second' AS e) AS expiry" \
    -c "VACUUM ANALYZE mcp_tasks.tasks" -c CHECKPOINT
fi
psql -h "$host" -U "$user" -X -q -d $db -At -c "SELECT count(*) || ' partitions of tasks' FROM pg_inherits WHERE inhparent = 'mcp_tasks.tasks'::regclass"
export PGOPTIONS="${PLAN_CACHE_MODE:+-c plan_cache_mode=$PLAN_CACHE_MODE}"
for round in 1 2; do
  for statement in every-partition bounds-as-subqueries bounds-as-parameters bounds-cast-from-text batch-every-partition batch-pruned-per-row batch-span-cast-from-text batch-length-hidden batch-length-hidden-span write-every-partition write-cast-from-text; do
    printf '%s %s: ' "$round" "$statement"
    pgbench -h "$host" -U "$user" -n -M prepared -c 8 -j 2 -T 10 -D "id=$id" -D "ok=$owner" -D "from=$from" -D "to=$to" \
      -D "ids=$ids" -D "oks=$owners" -D "froms=$froms" -D "tos=$tos" -f "$here/$statement.sql" $db 2>&1 | grep -E '^tps|ERROR' | sed 's/ (without initial connection time)//'
  done
done
