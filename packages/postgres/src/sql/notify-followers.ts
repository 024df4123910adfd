import { sql, type RawBuilder } from 'kysely';

/**
 * A RETURNING column that announces a status change on the control channel, only for a task
 * someone follows: unfollowed tasks pay no NOTIFY (and no commit-order lock) on the hot path.
 */
export function notifyFollowers(channel: string): RawBuilder<string | null> {
  return sql<string | null>`CASE WHEN followed THEN pg_notify(${channel}, json_build_object('op', 'status', 'taskId', id)::text)::text END AS followers_notified`;
}
