import type { InputAsk, TaskInput, TaskRef } from '@mcp-tasks/core';
import { decideRead, ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { visibleTo } from '../schema/task-predicates.js';
import { toTaskStatus } from '../schema/task-row.js';
import type { SqlContext } from './sql-context.js';

/** Where input `key` stands, without asking: answered, pending, or ended with the task (`decideRead`). */
export async function readInput(context: SqlContext, ref: TaskRef, key: string): Promise<InputAsk> {
  const { rows } = await sql<{ status: string; input: TaskInput | null }>`
    SELECT status, inputs -> ${key} AS input
      FROM ${context.tasks}
     WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
  `.execute(context.db);
  const row = rows[0];
  if (!row) return { state: 'ended', status: null };
  return decideRead({ status: toTaskStatus(row.status), inputs: row.input ? { [key]: row.input } : {} }, key);
}
