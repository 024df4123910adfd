import type { UpstreamCancelSettlement } from '@mcp-tasks/core';
import { sql } from 'kysely';
import type { UpstreamCancelsTable } from './upstream-cancels-table.js';

/** How long a settled row stays readable (an operator's look at what became of a cancel) before it is deleted. */
const KEEP_SETTLED = '1 day';

/** The cancel is owed no more (compare-and-set on `pending`); settled rows past a day are deleted on the way. */
export async function settleUpstreamCancel(context: UpstreamCancelsTable, taskId: string, settlement: UpstreamCancelSettlement): Promise<void> {
  await sql`
    WITH settled AS (
      UPDATE ${context.table}
         SET state = ${settlement}, settled_at = now()
       WHERE task_id = ${taskId} AND state = 'pending'
    )
    DELETE FROM ${context.table}
     WHERE state <> 'pending' AND settled_at < now() - ${KEEP_SETTLED}::interval
  `.execute(context.db);
}
