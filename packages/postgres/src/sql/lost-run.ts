import { sql, type RawBuilder } from 'kysely';
import { touchedAt } from '../schema/task-predicates.js';

// What happens to a live task whose run was lost (its node's lease expired, an earlier incarnation
// of its node left it, or its node no longer holds a run for it): a resumable task with attempts
// left is released for any node to claim; any other task fails with `message`. Written once, so
// the reaper, the restart settlement and the orphan rescuer decide alike. A hand-over (a draining
// node) is not a lost run and is not counted. The rule is core's `decideLostRun`; the lifecycle
// table's `lose` cases hold this SQL and that decision to the same answers.

/** The row resumes: resumable, and fewer lost runs so far than it may lose. */
const resumes = sql<boolean>`(resumable AND attempt - handovers < max_attempts)`;

/**
 * The SET list of the lost run's UPDATE, for a message in SQL (evaluated against the row before
 * the update). `code` is the JSON-RPC code of the failure.
 */
export function settleLostRun(code: number, message: RawBuilder<string>): RawBuilder<unknown> {
  const failure = sql<string>`CASE WHEN resumable
    THEN 'The task failed after ' || (attempt - handovers) || ' attempts; each run was lost. Last: ' || ${message}
    ELSE ${message} END`;
  return sql`
    node_id = CASE WHEN ${resumes} THEN NULL ELSE node_id END,
    status = CASE WHEN ${resumes} THEN status ELSE 'failed' END,
    error = CASE WHEN ${resumes} THEN NULL ELSE jsonb_build_object('code', ${code}::int, 'message', ${failure}) END,
    status_message = CASE WHEN ${resumes} THEN 'Resuming: ' || ${message} ELSE ${failure} END,
    result = NULL,
    last_updated_at = ${touchedAt}`;
}

/**
 * The RETURNING column that announces the outcome: a released task as claimable, a failed one
 * as a cancel (a run still going on its node aborts). Reads the updated row.
 */
export function announceLostRun(channel: string, row: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`pg_notify(${channel}, json_build_object('op', CASE WHEN ${row}.node_id IS NULL THEN 'claimable' ELSE 'cancel' END, 'taskId', ${row}.id)::text)::text`;
}
