import { sql, type RawBuilder } from 'kysely';

/**
 * A column that announces a claimable row (no run holds it and it is `working`: a task waiting
 * for input with no run is not) so nodes with a free run slot try to claim; other rows announce
 * nothing. `row` names the row's source in the statement.
 */
export function notifyClaimable(channel: string, row: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`CASE WHEN ${row}.node_id IS NULL AND ${row}.status = 'working' THEN pg_notify(${channel}, json_build_object('op', 'claimable', 'taskId', ${row}.id)::text)::text END AS claimable_notified`;
}
