import type { InputAsk, InputRequest, TaskInput, TaskRef } from '@mcp-tasks/core';
import { InvalidTaskValueError, TASK_LIMITS, isTerminal, ownerKey } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { touchedAt, visibleTo } from '../schema/task-predicates.js';
import { toTaskStatus } from '../schema/task-row.js';
import { notifyFollowers } from './notify-followers.js';
import { withExecutor, type SqlContext } from './sql-context.js';

/**
 * Asks for input under `key`: a key answered before returns its first answer; otherwise the key
 * is recorded (once) and the task moves to `input_required`. The row is locked so the
 * "answered?" read and the write see one state.
 */
export async function requestInput(context: SqlContext, ref: TaskRef, key: string, request: InputRequest): Promise<InputAsk> {
  return context.db.transaction().execute(async (trx) => {
    const { tasks } = withExecutor(context, trx);
    const { rows } = await sql<{ status: string; input: TaskInput | null; asked: number }>`
      SELECT status, inputs -> ${key} AS input, cardinality(input_keys) AS asked
        FROM ${tasks}
       WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
         FOR UPDATE
    `.execute(trx);
    const row = rows[0];
    if (!row) return { state: 'ended', status: null };
    const status = toTaskStatus(row.status);
    if (row.input?.response !== undefined) return { state: 'answered', response: row.input.response };
    if (isTerminal(status)) return { state: 'ended', status };
    if (!row.input && row.asked >= TASK_LIMITS.maxInputKeys) {
      throw new InvalidTaskValueError(`a task may ask at most ${TASK_LIMITS.maxInputKeys} input keys`);
    }
    const addKey = row.input
      ? sql``
      : sql`, inputs = inputs || jsonb_build_object(${key}::text, jsonb_build_object('request', ${JSON.stringify(request)}::jsonb)),
              input_keys = array_append(input_keys, ${key}::text)`;
    // Followers hear of a new key or a move to input_required, not of a repeated ask.
    const changed = !row.input || status !== 'input_required';
    await sql`
      UPDATE ${tasks}
         SET status = 'input_required',
             last_updated_at = ${touchedAt}
             ${addKey}
       WHERE id = ${ref.taskId} AND status IN ('working', 'input_required')
      ${changed ? sql`RETURNING ${notifyFollowers(context.channel)}` : sql``}
    `.execute(trx);
    return { state: 'pending' };
  });
}
