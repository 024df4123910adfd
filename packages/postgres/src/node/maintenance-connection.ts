import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { MaintenanceLogger } from '../maintenance/maintenance-logger.js';
import type { TasksDatabase } from '../schema/tasks-table.js';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import { sessionClientConfig, type SessionConnections } from './session-connections.js';

/** The application_name of the maintenance leader's connections, followed by `:` and the instance id. */
export const MAINTENANCE_APPLICATION_NAME = 'mcp-tasks:maintenance';

/**
 * The maintenance services' own small pool on the direct connection string: their rounds then
 * neither take the pooler's slots nor wait behind request traffic. Two connections: a long sweep
 * batch leaves one for the reaper. Idle connections close after a while, since rounds are seconds apart.
 */
export class MaintenanceConnection {
  readonly context: SqlContext;
  readonly #db: Kysely<TasksDatabase>;

  constructor(session: SessionConnections, context: SqlContext, instanceId: string, logger: MaintenanceLogger) {
    const pool = new pg.Pool({ ...sessionClientConfig(session, MAINTENANCE_APPLICATION_NAME, instanceId), max: 2, idleTimeoutMillis: 30_000 });
    pool.on('error', (error) => logger.warn('a maintenance connection failed; the next round reconnects', error));
    pool.on('connect', (client) => client.on('error', (error) => logger.warn('a maintenance connection failed', error)));
    this.#db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool }) });
    this.context = withExecutor(context, this.#db);
  }

  close(): Promise<void> {
    return this.#db.destroy();
  }
}
