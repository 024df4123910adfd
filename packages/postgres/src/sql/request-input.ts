import type { InputAsk, InputRequest, RunClaim, TaskRef } from '@mcp-tasks/core';
import { decideAsk, decideRunWrite, ownerKey, stateOf } from '@mcp-tasks/core';
import { sql } from 'kysely';
import { touchedAt, visibleTo } from '../schema/task-predicates.js';
import { notifyFollowers } from './notify-followers.js';
import { getTask } from './get-task.js';
import { withExecutor, type SqlContext } from './sql-context.js';

/**
 * Asks for input under `key`, as core's state machine decides (`decideAsk`): the row is locked so
 * the decision and the write see one state. A new key is recorded once; the task moves to
 * `input_required`; followers hear of a new key or of the move, not of a repeated ask.
 */
export async function requestInput(context: SqlContext, ref: TaskRef, key: string, request: InputRequest, claim: RunClaim | undefined): Promise<InputAsk> {
  return context.db.transaction().execute(async (trx) => {
    const tx = withExecutor(context, trx);
    const task = await getTask(tx, ref, { forUpdate: true });
    if (!task) return { state: 'ended', status: null };
    const state = stateOf(task);
    const decision = decideAsk(state, key);
    if (decision.kind === 'answered') return { state: 'answered', response: decision.response };
    if (decision.kind === 'ended') return { state: 'ended', status: decision.status };
    if (decideRunWrite(state, claim).kind === 'lost') return { state: 'ended', status: task.status };
    const addKey = decision.newKey
      ? sql`, inputs = inputs || jsonb_build_object(${key}::text, jsonb_build_object('request', ${JSON.stringify(request)}::jsonb)),
              input_keys = array_append(input_keys, ${key}::text)`
      : sql``;
    await sql`
      UPDATE ${tx.tasks}
         SET status = 'input_required',
             last_updated_at = ${touchedAt}
             ${addKey}
       WHERE id = ${ref.taskId} AND ${visibleTo(ownerKey(ref.owner))}
      ${decision.changed ? sql`RETURNING ${notifyFollowers(context.channel)}` : sql``}
    `.execute(trx);
    return { state: 'pending' };
  });
}
