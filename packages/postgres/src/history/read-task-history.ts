import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { inputQuestionOf } from '../operator/input-question.js';
import { withoutStack } from '../operator/operator-error.js';
import { toTaskStatus } from '../schema/task-row.js';
import type { HistoryTables } from './history-tables.js';
import type { OperatorAction, TaskEvent, TaskEventKind, TaskHistory } from './history-types.js';

interface EventRow {
  at: Date;
  kind: string;
  status: string;
  node_id: string | null;
  attempt: number;
  detail: Record<string, unknown> | null;
  request: unknown;
  inputs_asked: number;
  attempts: number;
}

/**
 * A task's history by id alone, whoever owns it, oldest first: the rows of `task_events` with the
 * question of each input request read from the task's own row (so the history stores the key,
 * not the question twice), and the cancel owed to the upstream of a proxied task. `undefined`
 * when there is no such task (never created, or swept with its history).
 */
export async function readTaskHistory(db: Kysely<any>, tables: HistoryTables, taskId: string): Promise<TaskHistory | undefined> {
  const { rows } = await sql<EventRow>`
    SELECT e.at, e.kind, e.status, e.node_id, e.attempt, e.detail, e.seq,
           CASE WHEN e.kind = 'input_requested' THEN t.inputs -> (e.detail->>'key') -> 'request' END AS request,
           cardinality(t.input_keys) AS inputs_asked, t.attempt AS attempts
      FROM ${tables.tasks} AS t
      LEFT JOIN ${tables.events} AS e ON e.task_id = t.id AND e.expiry_key = t.expiry_key
     WHERE t.id = ${taskId}
    UNION ALL
    SELECT u.created_at, 'upstream_cancel', t.status, t.node_id, t.attempt,
           jsonb_build_object('upstream', u.upstream, 'state', u.state, 'attempts', u.attempts, 'lastError', left(u.last_error, 500)),
           NULL, NULL, cardinality(t.input_keys), t.attempt
      FROM ${tables.upstreamCancels} AS u
      JOIN ${tables.tasks} AS t ON t.id = u.task_id
     WHERE u.task_id = ${taskId}
     ORDER BY at NULLS FIRST, seq NULLS LAST
  `.execute(db);
  if (rows.length === 0) return undefined;
  return {
    // A task of a release before the history has no events: the LEFT JOIN's one empty row.
    events: rows.filter((row) => row.kind !== null).map(eventOf),
    inputsAsked: Number(rows[0]!.inputs_asked),
    attempts: Number(rows[0]!.attempts),
  };
}

function eventOf(row: EventRow): TaskEvent {
  const detail = row.detail ?? {};
  // A reason or an error message may carry a stack: the operator's rule (operator-error.ts) withholds it.
  const text = (name: string) => (typeof detail[name] === 'string' ? withoutStack(detail[name] as string) : undefined);
  const kind = row.kind as TaskEventKind;
  const base = { at: row.at, kind, status: toTaskStatus(row.status), nodeId: row.node_id, attempt: row.attempt };
  switch (kind) {
    case 'input_requested':
      return { ...base, key: text('key') ?? '?', ...(row.request == null ? {} : { question: inputQuestionOf(row.request) }) };
    case 'input_answered':
      return { ...base, key: text('key') ?? '?' };
    case 'released':
      return { ...base, ...optional('from', text('from')), ...optional('message', text('message')) };
    case 'failed':
      return typeof detail['code'] === 'number' ? { ...base, error: { code: detail['code'], message: text('message') ?? '' } } : base;
    case 'completed':
      return { ...base, toolError: detail['toolError'] === true };
    case 'cancelled':
      return { ...base, ...optional('message', text('message')) };
    case 'operator':
      return {
        ...base,
        actor: text('actor') ?? '?',
        action: (text('action') ?? 'cancel') as OperatorAction,
        ...optional('relatedTaskId', text('relatedTaskId')),
        ...optional('filter', text('filter')),
      };
    case 'upstream_cancel':
      return {
        ...base,
        upstream: { name: text('upstream') ?? '?', state: text('state') ?? '?', attempts: Number(detail['attempts'] ?? 0), lastError: text('lastError') ?? null },
      };
    default:
      return base;
  }
}

function optional<K extends string>(name: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: string };
}
