import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { TasksDatabase } from '../schema/tasks-table.js';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import { instanceApplicationName } from '../node/node-identity.js';
import type { MaintenanceLogger } from './maintenance-logger.js';

/**
 * The application_name of the lease connection, followed by `:` and the process's instance id
 * ({@link instanceApplicationName}), so operators find it in pg_stat_activity and a namesake
 * sees whether this process is still connected.
 */
export const LEASE_APPLICATION_NAME = 'mcp-tasks:lease';

/**
 * The node lease's own connection, outside the store's pool: request traffic that fills the pool
 * can never queue a renewal behind it (a node that loses its lease has its tasks failed for every
 * owner). A pool of one gives the reconnect: a broken connection is discarded and the next
 * renewal opens a new one. Its statement timeout stays below the renewal interval, so
 * a renewal stuck on a lock or a dead socket fails in time for the next one to be tried.
 */
export class LeaseConnection {
  readonly #pool: pg.Pool;
  readonly #db: Kysely<TasksDatabase>;
  readonly context: SqlContext;

  constructor(storePool: pg.Pool, context: SqlContext, instanceId: string, timeouts: { statementTimeoutMs: number; connectTimeoutMs: number }, logger: MaintenanceLogger) {
    const { max: _max, min: _min, idleTimeoutMillis: _idle, ...clientConfig } = storePool.options as pg.PoolConfig;
    this.#pool = new pg.Pool({
      ...clientConfig,
      application_name: instanceApplicationName(LEASE_APPLICATION_NAME, instanceId),
      max: 1,
      // Kept open between renewals: reconnecting each time would put a connect on the renewal's path.
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: timeouts.connectTimeoutMs,
      statement_timeout: timeouts.statementTimeoutMs,
    });
    this.#pool.on('error', (error) => logger.warn('the lease connection failed; the next renewal reconnects', error));
    this.#db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    this.context = withExecutor(context, this.#db);
  }

  close(): Promise<void> {
    return this.#db.destroy();
  }
}
