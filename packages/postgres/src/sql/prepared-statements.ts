import type { MaintenanceLogger } from '../maintenance/maintenance-logger.js';

/**
 * Whether the store's hot statements run as named (prepared) statements: `true` always, `false`
 * never (a transaction-mode pooler that cannot keep them: PgBouncer before 1.21, or without
 * `max_prepared_statements`; RDS Proxy pins the connection instead), `'auto'` (the default) until
 * the first sign that the connection a statement ran on is not the one it was prepared on.
 */
export type PreparedStatementsMode = boolean | 'auto';

/**
 * The store's one switch for named statements. In `'auto'` a statement that fails because its
 * name is unknown on the server connection or already taken there (the pooler handed the client
 * another backend) turns them off for the store's lifetime, once, with a warning, and is run again
 * unprepared: both errors are raised at Parse or Bind, before anything executed, so the retry
 * cannot apply a write twice.
 */
export class PreparedStatements {
  #enabled: boolean;
  readonly #auto: boolean;
  readonly #logger: MaintenanceLogger;

  constructor(mode: PreparedStatementsMode, logger: MaintenanceLogger) {
    if (mode !== true && mode !== false && mode !== 'auto') throw new TypeError("preparedStatements must be true, false or 'auto'");
    this.#enabled = mode !== false;
    this.#auto = mode === 'auto';
    this.#logger = logger;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** Whether `error` says the pooler moved a prepared statement's client to another backend; in `'auto'` that turns them off. */
  pooledAway(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    if (!this.#auto || (code !== DUPLICATE_PREPARED_STATEMENT && code !== UNKNOWN_PREPARED_STATEMENT)) return false;
    if (this.#enabled) {
      this.#enabled = false;
      this.#logger.warn(
        'named prepared statements do not survive this connection (a transaction-mode pooler): the store runs its statements unprepared from now on; ' +
          'set preparedStatements: false to skip this check, or let the pooler keep them (PgBouncer >= 1.21 with max_prepared_statements)',
      );
    }
    return true;
  }
}

/** SQLSTATE duplicate_prepared_statement: the name was prepared on this backend by another client. */
const DUPLICATE_PREPARED_STATEMENT = '42P05';
/** SQLSTATE invalid_sql_statement_name: the client prepared the name on another backend. */
const UNKNOWN_PREPARED_STATEMENT = '26000';
