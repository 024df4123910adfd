import { sql, type RawBuilder } from 'kysely';

/** The tables a task's history reads and the operator's actions write (migrations 0001, 0009, 0010). */
export interface HistoryTables {
  readonly tasks: RawBuilder<unknown>;
  /** `<schema>.task_events`: the trigger's and the operators' rows. */
  readonly events: RawBuilder<unknown>;
  /** `<schema>.upstream_cancels`: a proxied task's owed cancel, joined into its history. */
  readonly upstreamCancels: RawBuilder<unknown>;
}

export function historyTables(schema: string): HistoryTables {
  return { tasks: sql.id(schema, 'tasks'), events: sql.id(schema, 'task_events'), upstreamCancels: sql.id(schema, 'upstream_cancels') };
}
