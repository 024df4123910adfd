import type { OwedUpstreamCancel } from '@mcp-tasks/core';
import { sql } from 'kysely';
import type { UpstreamCancelsTable } from './upstream-cancels-table.js';

/** Records an owed cancel, due now; one already recorded for the task is left as it is. */
export async function oweUpstreamCancel(context: UpstreamCancelsTable, cancel: Omit<OwedUpstreamCancel, 'attempts'>): Promise<void> {
  await sql`
    INSERT INTO ${context.table} (task_id, upstream, upstream_task_id, upstream_session, upstream_subject)
    VALUES (${cancel.taskId}, ${cancel.upstream}, ${cancel.upstreamTaskId}, ${cancel.session ?? null}, ${cancel.subject ?? null})
    ON CONFLICT (task_id) DO NOTHING
  `.execute(context.db);
}
