import { sql, type Kysely, type RawBuilder } from 'kysely';
import type pg from 'pg';
import type { TasksDatabase } from '../schema/tasks-table.js';
import type { PreparedStatements } from './prepared-statements.js';

/** What every SQL operation needs: where to run, which table, which NOTIFY channel. */
export interface SqlContext {
  /** The pool-backed database, or a transaction on it. */
  readonly db: Kysely<TasksDatabase>;
  /** `<schema>.tasks`, ready to splice into a statement. */
  readonly tasks: RawBuilder<unknown>;
  /** `<schema>.nodes` (node leases), ready to splice into a statement. */
  readonly nodes: RawBuilder<unknown>;
  /** `<schema>.create_durable_task`, the one-round-trip create with its quota check (migrations 0003, 0004). */
  readonly createTaskFunction: RawBuilder<unknown>;
  /** `<schema>.create_durable_tasks`, several creates in one statement (migration 0022). */
  readonly createTasksFunction: RawBuilder<unknown>;
  /** `<schema>.task_steps`, the journal of `ctx.step`. */
  readonly steps: RawBuilder<unknown>;
  /** `<schema>.task_events`, the tasks' history (migration 0010). */
  readonly events: RawBuilder<unknown>;
  /** The schema's name, for the statements that name one of its tables at run time (a partition). */
  readonly schema: string;
  /** `<schema>.cluster_stats`, the leader's counts of the cluster's tasks (migration 0005). */
  readonly clusterStats: RawBuilder<unknown>;
  /** `<schema>.task_storage`, what each pool keeps until its tasks expire (migration 0012). */
  readonly storage: RawBuilder<unknown>;
  /** `<schema>.task_storage_bucket`, the counter row of an expiry (migration 0012). */
  readonly storageBucket: RawBuilder<unknown>;
  /** The control channel cancels and answers are announced on. */
  readonly channel: string;
  /** The pool behind `db` when `db` is the pool itself (not a transaction): hot statements run on it prepared. */
  readonly pool?: pg.Pool | undefined;
  /** Whether statements on `pool` may be named (off behind a pooler that cannot keep them). */
  readonly prepared?: PreparedStatements | undefined;
}

export function sqlContext(db: Kysely<TasksDatabase>, schema: string, channel: string, pool?: pg.Pool, prepared?: PreparedStatements): SqlContext {
  return {
    db,
    pool,
    prepared,
    tasks: sql.id(schema, 'tasks'),
    nodes: sql.id(schema, 'nodes'),
    createTaskFunction: sql.id(schema, 'create_durable_task'),
    createTasksFunction: sql.id(schema, 'create_durable_tasks'),
    steps: sql.id(schema, 'task_steps'),
    events: sql.id(schema, 'task_events'),
    schema,
    clusterStats: sql.id(schema, 'cluster_stats'),
    storage: sql.id(schema, 'task_storage'),
    storageBucket: sql.id(schema, 'task_storage_bucket'),
    channel,
  };
}

/** The same context on another executor (a transaction or a pinned connection). */
export function withExecutor(context: SqlContext, db: Kysely<TasksDatabase>): SqlContext {
  return { ...context, db, pool: undefined };
}
