import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  InputRequest,
  InputResponses,
  JsonValue,
  ListTasksOptions,
  NewTask,
  RunClaim,
  StepBegin,
  TaskControlState,
  TaskStep,
  StepsOptions,
  TaskOutcome,
  LiveTaskCount,
  TaskOwner,
  TaskPage,
  TaskRecord,
  TaskSnapshot,
  TaskRef,
  TaskStore,
} from '@mcp-tasks/core';
import {
  assertTaskOwner,
  InvalidTaskValueError,
  normaliseStatusMessage,
  TASK_LIMITS,
  validateClaim,
  validateInputKey,
  validateInputRequest,
  validateJsonValue,
  validateStepName,
  validateInputResponses,
  validateNewTask,
  validateOutcome,
  validateRef,
} from '@mcp-tasks/core';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { controlChannelOf } from './listener/control-channel.js';
import { consoleLogger, type MaintenanceLogger } from './maintenance/maintenance-logger.js';
import { migrate } from './migrations/migrate.js';
import { assertDirectConnectionString } from './node/session-connections.js';
import { explainConnectionError } from './connection/connection-error.js';
import { assertSchemaName, DEFAULT_SCHEMA } from './schema/schema-name.js';
import type { TasksDatabase } from './schema/tasks-table.js';
import { answerInput } from './sql/answer-input.js';
import { beginStep } from './sql/begin-step.js';
import { claimTask } from './sql/claim-task.js';
import { finishStep } from './sql/finish-step.js';
import { readSteps } from './sql/read-steps.js';
import { releaseTask } from './sql/release-task.js';
import { parkTask } from './sql/park-task.js';
import { cancelTask } from './sql/cancel-task.js';
import { createTask } from './sql/create-task.js';
import { finishTask } from './sql/finish-task.js';
import { createTasks, type CreateWrite } from './sql/create-tasks.js';
import { finishTasks, type FinishWrite } from './sql/finish-tasks.js';
import { setStatusMessages, type StatusMessageWrite } from './sql/set-status-messages.js';
import { beginSteps, type StepWrite } from './sql/begin-steps.js';
import { finishSteps, type StepResultWrite } from './sql/finish-steps.js';
import { WriteBatcher } from './writes/write-batcher.js';
import { followTask } from './sql/follow-task.js';
import { followTasks } from './sql/follow-tasks.js';
import { getTask } from './sql/get-task.js';
import { readTask } from './sql/read-task.js';
import { readTaskBatch } from './sql/read-task-batch.js';
import { ReadBatcher } from './reads/read-batcher.js';
import { countLiveTasksOfTools } from './sql/count-live-tasks-of-tools.js';
import { PostgresUpstreamCancelLedger } from './upstream-cancels/postgres-upstream-cancel-ledger.js';
import { listTasks } from './sql/list-tasks.js';
import { readControlStates } from './sql/read-control-states.js';
import { readInput } from './sql/read-input.js';
import { requestInput } from './sql/request-input.js';
import { setStatusMessage } from './sql/set-status-message.js';
import { refuseUnstorableValue } from './sql/refuse-unstorable-value.js';
import { sqlContext, type SqlContext } from './sql/sql-context.js';
import { PreparedStatements, type PreparedStatementsMode } from './sql/prepared-statements.js';

/** Options of {@link PostgresTaskStore.connect}. Give `connectionString` or `pool`. */
export interface PostgresTaskStoreOptions {
  /** Where to connect; the store creates (and closes) its own pool. */
  readonly connectionString?: string;
  /** A pool the application owns; the store uses it and leaves it open on `close()`. */
  readonly pool?: pg.Pool;
  /**
   * A connection string straight to PostgreSQL (`DIRECT_DATABASE_URL`) when `connectionString`
   * (or `pool`) goes through a transaction-mode pooler: migrations take their lock on it, and the
   * `PostgresTaskNode` beside the store takes it for its LISTEN, lease and maintenance
   * connections. Default: everything uses the pool's settings.
   */
  readonly directConnectionString?: string;
  /** Size of the pool the store creates from `connectionString`. Default 10. */
  readonly poolSize?: number;
  /** The schema of the tables (lower-case identifier). Default `mcp_tasks`. */
  readonly schema?: string;
  /**
   * Apply pending migrations before the store is returned. Default true; set false when the
   * store's role may not run DDL and `mcp-tasks migrate` is run separately.
   */
  readonly migrate?: boolean;
  /** Where problems of idle pool connections are reported. Default: the console. */
  readonly logger?: MaintenanceLogger;
  /**
   * How long a new connection may take before it fails (ms), so a host that accepts TCP but never
   * answers cannot hang `connect` or a query. Default {@link DEFAULT_CONNECTION_TIMEOUT_MS}; 0 waits forever.
   */
  readonly connectionTimeoutMillis?: number;
  /**
   * Whether hot statements run as named prepared statements on the pool: `'auto'` (default)
   * until a statement fails because the pooler moved it to another backend (then never, with a
   * warning, and the statement runs again unprepared); `false` behind a transaction-mode pooler
   * that cannot keep them; `true` always. See `docs/postgres.md`.
   */
  readonly preparedStatements?: PreparedStatementsMode;
}

/** The application_name of the connection a store migrates on, when it has a direct connection string. */
export const MIGRATION_APPLICATION_NAME = 'mcp-tasks:migrate';

/** The default `connectionTimeoutMillis`: 10 s. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;

/** What the node beside a store shares with it: the same pool and statements. */
export interface StoreConnection {
  readonly pool: pg.Pool;
  readonly sql: SqlContext;
  readonly schema: string;
  /** The store's direct connection string, the node's default. */
  readonly directConnectionString?: string | undefined;
}

const connections = new WeakMap<PostgresTaskStore, StoreConnection>();

/** The pool and statements of `store`, for the node that runs the cluster services beside it. */
export function connectionOf(store: PostgresTaskStore): StoreConnection {
  const connection = connections.get(store);
  if (!connection) throw new TypeError('not a PostgresTaskStore');
  return connection;
}

/**
 * The clustered store: tasks are rows of `<schema>.tasks`, so every node sharing the database
 * answers for every task. It only talks SQL, on its pool: writes are compare-and-set in SQL,
 * expiry is judged by the database clock, and the owner's quota is exact under concurrency.
 * The cluster services (LISTEN, node lease, reaper, sweeper) live beside it in a
 * `PostgresTaskNode`.
 */
export class PostgresTaskStore implements TaskStore {
  /** The schema the store reads and writes. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #db: Kysely<TasksDatabase>;
  readonly #sql: SqlContext;
  readonly #reads: ReadBatcher;
  readonly #creates: WriteBatcher<CreateWrite, TaskRecord>;
  readonly #finishes: WriteBatcher<FinishWrite, TaskRecord | undefined>;
  readonly #statusMessages: WriteBatcher<StatusMessageWrite, TaskRecord | undefined>;
  readonly #stepBegins: WriteBatcher<StepWrite, StepBegin>;
  readonly #stepResults: WriteBatcher<StepResultWrite, boolean>;
  /** The cancels a gateway on this database owes its upstreams (migration 0009). */
  readonly upstreamCancels: PostgresUpstreamCancelLedger;
  #closed: Promise<void> | undefined;

  /** Opens a store; applies migrations first unless `migrate: false`. */
  static async connect(options: PostgresTaskStoreOptions): Promise<PostgresTaskStore> {
    const store = new PostgresTaskStore(options);
    try {
      if (options.migrate ?? true) await store.#migrate(options.directConnectionString, options.connectionTimeoutMillis);
    } catch (error) {
      await store.close();
      throw explainConnectionError(error, options.directConnectionString === undefined ? 'the connection string' : 'the direct connection string');
    }
    return store;
  }

  /** Prefer {@link PostgresTaskStore.connect}: the constructor does not migrate. */
  constructor(options: PostgresTaskStoreOptions) {
    if (!options.pool === !options.connectionString) throw new TypeError('give exactly one of connectionString and pool');
    if (options.directConnectionString !== undefined) assertDirectConnectionString(options.directConnectionString);
    this.schema = assertSchemaName(options.schema ?? DEFAULT_SCHEMA);
    const logger = options.logger ?? consoleLogger;
    this.#ownsPool = !options.pool;
    this.#pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: options.poolSize ?? 10,
        connectionTimeoutMillis: options.connectionTimeoutMillis ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      });
    if (this.#ownsPool) this.#pool.on('error', (error) => logger.error('idle pool connection failed', error));
    // A connection held between statements (a maintenance batch's transaction) that the server
    // terminates (idle_in_transaction_session_timeout, an operator) emits 'error' with no
    // listener, which would crash the process; its next statement fails instead, and the pool
    // discards it on release.
    if (this.#ownsPool) this.#pool.on('connect', (client) => client.on('error', (error) => logger.warn('a pool connection failed', error)));
    this.#db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    this.#sql = sqlContext(this.#db, this.schema, controlChannelOf(this.schema), this.#pool, new PreparedStatements(options.preparedStatements ?? 'auto', logger));
    this.#reads = new ReadBatcher({ one: (ref) => readTask(this.#sql, ref), many: (refs) => readTaskBatch(this.#sql, refs) });
    // Group commit: the hot writes that arrive while one of their kind is under way share a
    // statement and its commit (docs/postgres.md, "Group commit").
    this.#creates = new WriteBatcher({
      one: ({ task, statusMessage, options }) => createTask(this.#sql, task, statusMessage, options),
      many: (writes) => createTasks(this.#sql, writes),
      key: ({ task }) => task.taskId,
    });
    this.#finishes = new WriteBatcher({
      one: ({ ref, outcome, claim }) => finishTask(this.#sql, ref, outcome, claim),
      many: (writes) => finishTasks(this.#sql, writes),
      key: ({ ref }) => ref.taskId,
    });
    this.#statusMessages = new WriteBatcher({
      one: ({ ref, statusMessage, claim }) => setStatusMessage(this.#sql, ref, statusMessage, claim),
      many: (writes) => setStatusMessages(this.#sql, writes),
      key: ({ ref }) => ref.taskId,
    });
    this.#stepBegins = new WriteBatcher({
      one: ({ ref, claim, name }) => beginStep(this.#sql, ref, claim, name),
      many: (writes) => beginSteps(this.#sql, writes),
      key: ({ ref }) => ref.taskId,
    });
    this.#stepResults = new WriteBatcher({
      one: ({ ref, claim, name, result }) => finishStep(this.#sql, ref, claim, name, result),
      many: (writes) => finishSteps(this.#sql, writes),
      key: ({ ref }) => ref.taskId,
    });
    this.upstreamCancels = new PostgresUpstreamCancelLedger(this.#db, this.schema);
    connections.set(this, { pool: this.#pool, sql: this.#sql, schema: this.schema, directConnectionString: options.directConnectionString });
  }

  /** Migrates on the pool, or on a connection of its own to `direct` (the lock and DDL stay off the pooler). */
  async #migrate(direct: string | undefined, connectionTimeoutMillis: number | undefined): Promise<void> {
    if (direct === undefined) {
      await migrate(this.#pool, this.schema);
      return;
    }
    const pool = new pg.Pool({
      connectionString: direct,
      max: 1,
      application_name: MIGRATION_APPLICATION_NAME,
      connectionTimeoutMillis: connectionTimeoutMillis ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    });
    pool.on('error', () => undefined);
    try {
      await migrate(pool, this.schema);
    } finally {
      await pool.end();
    }
  }

  async create(task: NewTask, options: CreateOptions): Promise<TaskRecord> {
    validateNewTask(task);
    const statusMessage = task.statusMessage == null ? null : normaliseStatusMessage(task.statusMessage);
    return refuseUnstorableValue(() => this.#creates.write({ task, statusMessage, options }));
  }

  async get(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    return refuseUnstorableValue(() => getTask(this.#sql, ref));
  }

  async read(ref: TaskRef): Promise<TaskSnapshot | undefined> {
    validateRef(ref);
    // Joined with the reads of the same turn: the refs are checked and the owner key is JSON
    // (a NUL in a name is escaped), so no ref can fail the statement for the others.
    return this.#reads.read(ref);
  }

  async list(owner: TaskOwner, options: ListTasksOptions = {}): Promise<TaskPage> {
    assertTaskOwner(owner);
    return refuseUnstorableValue(() => listTasks(this.#sql, owner, options));
  }

  async setStatusMessage(ref: TaskRef, statusMessage: string, claim?: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    return refuseUnstorableValue(() => this.#statusMessages.write({ ref, statusMessage: normaliseStatusMessage(statusMessage), claim }));
  }

  async requestInput(ref: TaskRef, key: string, request: InputRequest, claim?: RunClaim): Promise<InputAsk> {
    validateRef(ref);
    validateInputRequest(key, request);
    return refuseUnstorableValue(() => requestInput(this.#sql, ref, key, request, claim));
  }

  async readInput(ref: TaskRef, key: string): Promise<InputAsk> {
    validateRef(ref);
    validateInputKey(key);
    return refuseUnstorableValue(() => readInput(this.#sql, ref, key));
  }

  async answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
    validateRef(ref);
    validateInputResponses(responses);
    return refuseUnstorableValue(() => answerInput(this.#sql, ref, responses));
  }

  async cancel(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    return refuseUnstorableValue(() => cancelTask(this.#sql, ref));
  }

  async finish(ref: TaskRef, outcome: TaskOutcome, claim?: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateOutcome(outcome);
    return refuseUnstorableValue(() => this.#finishes.write({ ref, outcome, claim }));
  }

  async controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>> {
    for (const ref of refs) validateRef(ref);
    return refuseUnstorableValue(() => readControlStates(this.#sql, refs));
  }

  async markFollowed(ref: TaskRef): Promise<boolean> {
    validateRef(ref);
    return refuseUnstorableValue(() => followTask(this.#sql, ref));
  }

  async claim(nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined> {
    if (typeof nodeId !== 'string' || nodeId === '') throw new InvalidTaskValueError('nodeId must be a non-empty string');
    return refuseUnstorableValue(() => claimTask(this.#sql, nodeId, tools));
  }

  async release(ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateClaim(claim);
    return refuseUnstorableValue(() => releaseTask(this.#sql, ref, claim));
  }

  async park(ref: TaskRef, claim: RunClaim, key: string): Promise<boolean> {
    validateRef(ref);
    validateClaim(claim);
    validateInputKey(key);
    return refuseUnstorableValue(() => parkTask(this.#sql, ref, claim, key));
  }

  async beginStep(ref: TaskRef, claim: RunClaim, name: string): Promise<StepBegin> {
    validateRef(ref);
    validateClaim(claim);
    validateStepName(name);
    return refuseUnstorableValue(() => this.#stepBegins.write({ ref, claim, name }));
  }

  async finishStep(ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean> {
    validateRef(ref);
    validateClaim(claim);
    validateStepName(name);
    validateJsonValue(result, `step ${name} result`, TASK_LIMITS.maxResultBytes);
    return refuseUnstorableValue(() => this.#stepResults.write({ ref, claim, name, result }));
  }

  async steps(ref: TaskRef, options: StepsOptions = {}): Promise<readonly TaskStep[]> {
    validateRef(ref);
    return refuseUnstorableValue(() => readSteps(this.#sql, ref, options.results === true));
  }

  /**
   * Whether the database answers a `SELECT 1` through the store's pool within `timeoutMs` (a
   * readiness check): rejects otherwise, also when every pooled connection is busy that long.
   */
  async countLive(tools: readonly string[], owner: TaskOwner): Promise<LiveTaskCount> {
    return countLiveTasksOfTools(this.#sql, tools, owner);
  }

  async ping(timeoutMs = 2_000): Promise<void> {
    if (this.#closed) throw new Error('the store is closed');
    let timer: NodeJS.Timeout | undefined;
    const query = this.#pool.query('SELECT 1');
    // A query that outlives the deadline finishes (or fails) later, unobserved.
    query.catch(() => undefined);
    try {
      await Promise.race([
        query,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`PostgreSQL did not answer SELECT 1 within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async markFollowedMany(owner: TaskOwner, taskIds: readonly string[]): Promise<TaskRecord[]> {
    for (const taskId of taskIds) validateRef({ taskId, owner });
    return refuseUnstorableValue(() => followTasks(this.#sql, owner, [...new Set(taskIds)]));
  }

  /** Closes the pool it created (a pool it was given stays open). Stop the node beside it first. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (!this.#ownsPool) return;
      await this.#db.destroy();
      // Kysely ends the pool only if a query of its own ran; a store that only migrated has not.
      if (!this.#pool.ended) await this.#pool.end();
    })();
    return this.#closed;
  }
}
