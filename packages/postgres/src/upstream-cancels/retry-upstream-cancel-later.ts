import { sql } from 'kysely';
import type { UpstreamCancelsTable } from './upstream-cancels-table.js';

/** An attempt failed: the owed cancel is due again `delayMs` from now, with the error that stopped it. */
export async function retryUpstreamCancelLater(context: UpstreamCancelsTable, taskId: string, delayMs: number, error: string): Promise<void> {
  await sql`
    UPDATE ${context.table}
       SET next_attempt_at = now() + make_interval(secs => ${Math.max(0, delayMs) / 1000}),
           last_error = ${error.slice(0, 500)}
     WHERE task_id = ${taskId} AND state = 'pending'
  `.execute(context.db);
}
