import { sql, type Kysely } from 'kysely';
import { OPERATOR_CANCEL_MESSAGE } from '../operator/operator-types.js';
import { isLive, touchedAt } from '../schema/task-predicates.js';
import type { HistoryTables } from './history-tables.js';
import type { OperatorBulkCancel } from './history-types.js';

/** Ids one statement cancels at most: a bulk cancel of more is refused before it begins. */
export const MAX_BULK_CANCEL = 1000;

/**
 * tasks/cancel for an operator, for one task or many by id (database access is the credential):
 * the same compare-and-set on a live, unexpired row and the same NOTIFY as an owner's cancel, so
 * the node running each one aborts its run; and in the same statement one `operator` row per
 * cancelled task in its history (who, and the filter the ids were matched by). The trigger of
 * migration 0010 adds the `cancelled` row after it. Tasks terminal by now are left as they are.
 * Resolves the ids this statement cancelled.
 */
export async function cancelTasksByOperator(db: Kysely<any>, tables: HistoryTables, channel: string, cancel: OperatorBulkCancel): Promise<string[]> {
  if (cancel.taskIds.length === 0) return [];
  if (cancel.taskIds.length > MAX_BULK_CANCEL) throw new RangeError(`at most ${MAX_BULK_CANCEL} tasks are cancelled at once (got ${cancel.taskIds.length})`);
  const detail = JSON.stringify({ actor: cancel.actor, action: 'cancel', ...(cancel.filter === undefined ? {} : { filter: cancel.filter }) });
  const { rows } = await sql<{ id: string }>`
    WITH cancelled AS (
      UPDATE ${tables.tasks}
         SET status = 'cancelled',
             status_message = ${OPERATOR_CANCEL_MESSAGE},
             last_updated_at = ${touchedAt}
       WHERE id = ANY(${[...cancel.taskIds]}::text[]) AND ${isLive} AND (expires_at IS NULL OR expires_at > now())
      RETURNING id, node_id, attempt, expiry_key, pg_notify(${channel}, json_build_object('op', 'cancel', 'taskId', id)::text)::text AS notified
    ), recorded AS (
      INSERT INTO ${tables.events} (task_id, kind, status, node_id, attempt, detail, expiry_key)
      SELECT id, 'operator', 'cancelled', node_id, attempt, ${detail}::jsonb, expiry_key FROM cancelled
    )
    SELECT id FROM cancelled
  `.execute(db);
  return rows.map((row) => row.id);
}
