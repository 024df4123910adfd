import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { TasksDatabase } from '../schema/tasks-table.js';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import { sessionClientConfig, type SessionConnections } from '../node/session-connections.js';
import type { MaintenanceLogger } from './maintenance-logger.js';

/**
 * The application_name of the lease connection, followed by `:` and the process's instance id
 * ({@link instanceApplicationName}), so operators find it in pg_stat_activity and a namesake
 * sees whether this process is still connected.
 */
export const LEASE_APPLICATION_NAME = 'mcp-tasks:lease';

/** PgBouncer's refusal of a startup parameter it does not track (such as statement_timeout). */
const STARTUP_PARAMETER_REFUSED = /unsupported startup parameter/i;

/**
 * The node lease's own connection, outside the store's pool: request traffic that fills the pool
 * can never queue a renewal behind it (a node that loses its lease has its tasks failed for every
 * owner). A pool of one gives the reconnect: a broken connection is discarded and the next
 * renewal opens a new one. Its statement timeout stays below the renewal interval, so
 * a renewal stuck on a lock or a dead socket fails in time for the next one to be tried.
 *
 * The timeout is a startup parameter, which a pooler such as PgBouncer refuses ("unsupported
 * startup parameter"): the connection is then opened without it and bounds each statement on the
 * client side instead (a statement that outlasts it fails and its connection is discarded), and
 * {@link startupRefused} tells the node it is behind a pooler.
 */
export class LeaseConnection {
  readonly #db: Kysely<TasksDatabase>;
  readonly #logger: MaintenanceLogger;
  readonly #onStartupRefused: () => void;
  readonly context: SqlContext;
  #startupRefused = false;

  constructor(
    session: SessionConnections,
    context: SqlContext,
    instanceId: string,
    timeouts: { statementTimeoutMs: number; connectTimeoutMs: number },
    logger: MaintenanceLogger,
    onStartupRefused: () => void = () => {},
  ) {
    this.#logger = logger;
    this.#onStartupRefused = onStartupRefused;
    const config: pg.PoolConfig = {
      ...sessionClientConfig(session, LEASE_APPLICATION_NAME, instanceId),
      max: 1,
      // Kept open between renewals: reconnecting each time would put a connect on the renewal's path.
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: timeouts.connectTimeoutMs,
    };
    // Opened on the first statement (Kysely retries a failed open on the next one).
    this.#db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool: () => this.#open(config, timeouts.statementTimeoutMs) }) });
    this.context = withExecutor(context, this.#db);
  }

  /** Whether the server refused the statement timeout as a startup parameter (a pooler in between). */
  get startupRefused(): boolean {
    return this.#startupRefused;
  }

  close(): Promise<void> {
    return this.#db.destroy();
  }

  async #open(config: pg.PoolConfig, statementTimeoutMs: number): Promise<pg.Pool> {
    if (!this.#startupRefused) {
      const pool = this.#pool({ ...config, statement_timeout: statementTimeoutMs });
      try {
        (await pool.connect()).release();
        return pool;
      } catch (error) {
        await pool.end().catch(() => undefined);
        if (!STARTUP_PARAMETER_REFUSED.test(error instanceof Error ? error.message : String(error))) throw error;
        this.#startupRefused = true;
        this.#logger.warn(
          'the lease connection was refused its statement_timeout startup parameter (a pooler such as PgBouncer is in between): ' +
            'it bounds its statements on the client side instead; give the node a direct connection string (directConnectionString; DIRECT_DATABASE_URL in the demo)',
        );
        this.#onStartupRefused();
      }
    }
    return this.#pool({ ...config, query_timeout: statementTimeoutMs });
  }

  #pool(config: pg.PoolConfig): pg.Pool {
    const pool = new pg.Pool(config);
    // Every connection's own listener: the pool's covers an idle connection only, and one a
    // statement holds (between a statement's answer and its release) that the server ends (a
    // restart, a terminate) would emit 'error' with no listener, which ends the process. Its next
    // statement fails instead, and the pool discards it on release.
    pool.on('connect', (client) => client.on('error', (error) => this.#logger.warn('the lease connection failed; the next renewal reconnects', error)));
    // An idle connection's failure reaches both listeners: the connection's has logged it.
    pool.on('error', () => undefined);
    return pool;
  }
}
