import { sql } from 'kysely';
import type { UpstreamCancelsTable } from './upstream-cancels-table.js';

/** The owed cancels by upstream (the partial index's rows). */
export async function countOwedUpstreamCancels(context: UpstreamCancelsTable): Promise<Map<string, number>> {
  const { rows } = await sql<{ upstream: string; owed: string }>`
    SELECT upstream, count(*) AS owed FROM ${context.table} WHERE state = 'pending' GROUP BY upstream
  `.execute(context.db);
  return new Map(rows.map((row) => [row.upstream, Number(row.owed)]));
}
