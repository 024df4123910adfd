import type { TaskControlState, TaskRef } from '@mcp-tasks/core';
import { ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { toTaskStatus } from '../schema/task-row.js';
import { preparedRows } from './prepared-rows.js';
import type { SqlContext } from './sql-context.js';
import { textBatch } from './text-batch.js';

/** Control states of many tasks in one query; invisible tasks are absent from the map. */
export async function readControlStates(context: SqlContext, refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>> {
  const states = new Map<string, TaskControlState>();
  if (refs.length === 0) return states;
  const rows = await preparedRows(
    context,
    'read_control_states',
    sql<{ id: string; status: string; node_id: string | null; attempt: number; outstanding_keys: string[] }>`
    SELECT t.id, t.status, t.node_id, t.attempt,
           ARRAY(SELECT k.key
                   FROM unnest(t.input_keys) WITH ORDINALITY AS k (key, n)
                  WHERE NOT (t.inputs -> k.key ? 'response')
                  ORDER BY k.n) AS outstanding_keys
      FROM ${context.tasks} AS t
      JOIN unnest(${textBatch(refs.map((ref) => ref.taskId))}, ${textBatch(refs.map((ref) => ownerKey(ref.owner)))}) AS r (id, owner_key)
        ON t.id = r.id AND t.owner_key = r.owner_key
     WHERE t.expires_at IS NULL OR t.expires_at > now()
  `,
  );
  for (const row of rows) {
    const claim = row.node_id === null ? null : { nodeId: row.node_id, attempt: row.attempt };
    states.set(row.id, { status: toTaskStatus(row.status), claim, outstandingKeys: row.outstanding_keys });
  }
  return states;
}
