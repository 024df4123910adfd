import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { controlChannelOf } from '../listener/control-channel.js';
import { assertSchemaName, DEFAULT_SCHEMA } from '../schema/schema-name.js';
import type { TasksDatabase } from '../schema/tasks-table.js';
import { cancelTaskByOperator } from '../sql/cancel-task-by-operator.js';
import { listNodesForOperator } from '../sql/list-nodes-for-operator.js';
import { listTasksForOperator } from '../sql/list-tasks-for-operator.js';
import { readTaskForOperator } from '../sql/read-task-for-operator.js';
import { sqlContext, type SqlContext } from '../sql/sql-context.js';
import type { OperatorCancelResult, OperatorNodeSummary, OperatorTaskDetail, OperatorTaskFilter, OperatorTaskSummary } from './operator-types.js';

/**
 * The cluster's tasks as an operator sees them: every owner's, by id alone. Access to the
 * database is the credential, so this is for operator tools (the `mcp-tasks tasks` commands),
 * never for a request path. It borrows `pool` and never ends it.
 */
export class PostgresOperator {
  readonly #sql: SqlContext;

  constructor(pool: pg.Pool, schema: string = DEFAULT_SCHEMA) {
    assertSchemaName(schema);
    // Kysely would end the pool when destroyed; this object is never destroyed, the pool's owner ends it.
    const db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool }) });
    this.#sql = sqlContext(db, schema, controlChannelOf(schema));
  }

  listTasks(filter: OperatorTaskFilter = {}): Promise<OperatorTaskSummary[]> {
    return listTasksForOperator(this.#sql, filter);
  }

  getTask(taskId: string): Promise<OperatorTaskDetail | undefined> {
    return readTaskForOperator(this.#sql, taskId);
  }

  cancelTask(taskId: string): Promise<OperatorCancelResult | undefined> {
    return cancelTaskByOperator(this.#sql, taskId);
  }

  listNodes(): Promise<OperatorNodeSummary[]> {
    return listNodesForOperator(this.#sql);
  }
}
