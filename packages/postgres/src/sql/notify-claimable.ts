import { sql, type RawBuilder } from 'kysely';

/**
 * A column that announces a row no run holds (`node_id` NULL) as claimable, so nodes with a free
 * run slot try to claim; other rows announce nothing. `row` names the row's source in the statement.
 */
export function notifyClaimable(channel: string, row: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`CASE WHEN ${row}.node_id IS NULL THEN pg_notify(${channel}, json_build_object('op', 'claimable', 'taskId', ${row}.id)::text)::text END AS claimable_notified`;
}
