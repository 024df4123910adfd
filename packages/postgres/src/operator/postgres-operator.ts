import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { controlChannelOf } from '../listener/control-channel.js';
import { assertSchemaName, DEFAULT_SCHEMA } from '../schema/schema-name.js';
import type { TasksDatabase } from '../schema/tasks-table.js';
import { listNodesForOperator } from '../sql/list-nodes-for-operator.js';
import { listTasksForOperator } from '../sql/list-tasks-for-operator.js';
import { readClusterStats } from '../sql/read-cluster-stats.js';
import { readStepsForOperator } from '../sql/read-steps-for-operator.js';
import { readTaskForOperator } from '../sql/read-task-for-operator.js';
import { connectionOf, type PostgresTaskStore } from '../postgres-task-store.js';
import { newTaskId } from '@mcp-tasks/core';
import { cancelTasksByOperator } from '../history/cancel-tasks-by-operator.js';
import { historyTables, type HistoryTables } from '../history/history-tables.js';
import type { OperatorBulkCancel, OperatorRetryResult, TaskHistory } from '../history/history-types.js';
import { readTaskHistory } from '../history/read-task-history.js';
import { retryTaskByOperator } from '../history/retry-task-by-operator.js';
import type { ClusterStats } from '../stats/cluster-stats.js';
import { sqlContext, type SqlContext } from '../sql/sql-context.js';
import type { OperatorCancelResult, OperatorNodeSummary, OperatorTaskDetail, OperatorTaskFilter, OperatorTaskSteps, OperatorTaskSummary } from './operator-types.js';

/**
 * The cluster's tasks as an operator sees them: every owner's, by id alone. Access to the
 * database is the credential, so this is for operator tools (the `mcp-tasks tasks` commands),
 * never for a request path. It borrows `pool` and never ends it.
 */
export class PostgresOperator {
  readonly #sql: SqlContext;
  readonly #history: HistoryTables;

  constructor(pool: pg.Pool, schema: string = DEFAULT_SCHEMA) {
    assertSchemaName(schema);
    // Kysely would end the pool when destroyed; this object is never destroyed, the pool's owner ends it.
    const db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool }) });
    this.#sql = sqlContext(db, schema, controlChannelOf(schema));
    this.#history = historyTables(schema);
  }

  /** An operator on the pool of `store` (a node's console), in its schema. */
  static forStore(store: PostgresTaskStore): PostgresOperator {
    const { pool, schema } = connectionOf(store);
    return new PostgresOperator(pool, schema);
  }

  listTasks(filter: OperatorTaskFilter = {}): Promise<OperatorTaskSummary[]> {
    return listTasksForOperator(this.#sql, filter);
  }

  getTask(taskId: string): Promise<OperatorTaskDetail | undefined> {
    return readTaskForOperator(this.#sql, taskId);
  }

  /** The last `limit` steps of a task's journal (default 50), and how many it has. */
  getTaskSteps(taskId: string, limit = 50): Promise<OperatorTaskSteps> {
    return readStepsForOperator(this.#sql, taskId, limit);
  }

  /** The counts the maintenance leader last wrote (`undefined` before the first). */
  clusterStats(): Promise<ClusterStats | undefined> {
    return readClusterStats(this.#sql);
  }

  /**
   * Cancels one task as `actor` (recorded in its history with the cancel): the row after it, and
   * whether this cancel changed it (false: terminal or expired already); `undefined`: no such task.
   */
  async cancelTask(taskId: string, actor: string): Promise<OperatorCancelResult | undefined> {
    const [cancelled] = await cancelTasksByOperator(this.#sql.db, this.#history, this.#sql.channel, { taskIds: [taskId], actor });
    const task = await readTaskForOperator(this.#sql, taskId);
    return task && { task, cancelled: cancelled !== undefined };
  }

  /**
   * Cancels the live tasks among `cancel.taskIds` (the ids an operator was shown and confirmed,
   * at most {@link MAX_BULK_CANCEL}), each with its audit row; resolves the ids it cancelled.
   */
  cancelTasks(cancel: OperatorBulkCancel): Promise<string[]> {
    return cancelTasksByOperator(this.#sql.db, this.#history, this.#sql.channel, cancel);
  }

  /** A failed or cancelled task run again as a new task, where its tool allows it (see `retryTaskByOperator`). */
  retryTask(taskId: string, actor: string): Promise<OperatorRetryResult> {
    return retryTaskByOperator(this.#sql.db, this.#history, this.#sql.channel, taskId, newTaskId(), actor);
  }

  /** A task's history, oldest first; `undefined` when there is no such task. */
  getTaskHistory(taskId: string): Promise<TaskHistory | undefined> {
    return readTaskHistory(this.#sql.db, this.#history, taskId);
  }

  listNodes(): Promise<OperatorNodeSummary[]> {
    return listNodesForOperator(this.#sql);
  }
}
