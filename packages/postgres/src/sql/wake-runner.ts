import { sql, type RawBuilder } from 'kysely';
import type { SqlContext } from './sql-context.js';

// Where a control message about one task goes. The node that runs it (the row's node_id) hears it
// on its own wake channel when its nodes row names one (migration 0021), and only then; a task no
// run holds, or a runner of an earlier release (no wake channel), gets the broadcast channel, which
// every node hears. Followers on other nodes hear a status change on the broadcast channel only
// when the task is followed, as for every other change (notify-followers.ts).

/** The runner's wake channel, else the broadcast channel; `row` is the updated task row. */
function channelOfRunner(context: SqlContext, row: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`COALESCE((SELECT n.wake_channel FROM ${context.nodes} AS n WHERE n.node_id = ${row}.node_id), ${context.channel})`;
}

/** Whether the runner hears on a wake channel of its own (so followers need the broadcast besides). */
function runnerHasWakeChannel(context: SqlContext, row: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM ${context.nodes} AS n WHERE n.node_id = ${row}.node_id AND n.wake_channel IS NOT NULL)`;
}

/**
 * RETURNING columns that announce `op` (an SQL expression: `'cancel'`, `'input'`, or a CASE) to
 * the task's runner, and its change to followers elsewhere: `notified`, `followers_notified`.
 */
export function wakeRunner(context: SqlContext, op: RawBuilder<string>, row: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`pg_notify(${channelOfRunner(context, row)}, json_build_object('op', ${op}, 'taskId', ${row}.id)::text)::text AS notified,
    CASE WHEN ${row}.followed AND ${runnerHasWakeChannel(context, row)}
      THEN pg_notify(${context.channel}, json_build_object('op', 'status', 'taskId', ${row}.id)::text)::text END AS followers_notified`;
}
