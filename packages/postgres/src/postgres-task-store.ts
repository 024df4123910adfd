import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  InputRequest,
  InputResponses,
  NewTask,
  TaskControlState,
  TaskOutcome,
  TaskRecord,
  TaskRef,
  TaskSignal,
  TaskStore,
  Unsubscribe,
} from '@mcp-tasks/core';
import {
  isTerminal,
  normaliseStatusMessage,
  validateInputKey,
  validateInputRequest,
  validateInputResponses,
  validateNewTask,
  validateOutcome,
  validateRef,
} from '@mcp-tasks/core';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { controlChannelOf, type ControlMessage } from './listener/control-channel.js';
import { ControlListener, type ControlListenerConfig } from './listener/control-listener.js';
import { LeaseReaper, type LeaseReaperConfig } from './maintenance/lease-reaper.js';
import { consoleLogger, type MaintenanceLogger } from './maintenance/maintenance-logger.js';
import { NodeLease, type NodeLeaseConfig } from './maintenance/node-lease.js';
import { TtlSweeper, type TtlSweeperConfig } from './maintenance/ttl-sweeper.js';
import { migrate } from './migrations/migrate.js';
import { assertSchemaName, DEFAULT_SCHEMA } from './schema/schema-name.js';
import type { TasksDatabase } from './schema/tasks-table.js';
import { answerInput } from './sql/answer-input.js';
import { cancelTask } from './sql/cancel-task.js';
import { createTask } from './sql/create-task.js';
import { finishTask } from './sql/finish-task.js';
import { followTask } from './sql/follow-task.js';
import { getTask } from './sql/get-task.js';
import { readControlStates } from './sql/read-control-states.js';
import { readInput } from './sql/read-input.js';
import { readWatchedStates } from './sql/read-watched-states.js';
import { requestInput } from './sql/request-input.js';
import { setStatusMessage } from './sql/set-status-message.js';
import { refuseUnstorableValue } from './sql/refuse-unstorable-value.js';
import { sqlContext, type SqlContext } from './sql/sql-context.js';

/** Options of {@link PostgresTaskStore.connect}. Give `connectionString` or `pool`. */
export interface PostgresTaskStoreOptions {
  /** Where to connect; the store creates (and closes) its own pool. */
  readonly connectionString?: string;
  /** A pool the application owns; the store uses it and leaves it open on `close()`. */
  readonly pool?: pg.Pool;
  /** Size of the pool the store creates from `connectionString`. Default 10. */
  readonly poolSize?: number;
  /** The schema of the tables (lower-case identifier). Default `mcp_tasks`. */
  readonly schema?: string;
  /**
   * Apply pending migrations before the store is returned. Default true; set false when the
   * store's role may not run DDL and `mcp-tasks migrate` is run separately.
   */
  readonly migrate?: boolean;
  /** How often expired tasks are deleted (ms); they read as absent before that. Default 60 000. `0` disables the sweeper. */
  readonly sweepIntervalMs?: number;
  /** Further sweeper settings (batch size, pause). */
  readonly sweeper?: Omit<TtlSweeperConfig, 'intervalMs'>;
  /** Settings of the LISTEN connection (liveness, backoff, self-test). */
  readonly listener?: ControlListenerConfig;
  /** Where background problems are reported. Default: the console. */
  readonly logger?: MaintenanceLogger;
  /**
   * This node's id. Given, the store holds a node lease (`<schema>.nodes`) from `connect` to
   * `close`, runs the lease reaper, and the runtime records this id on the tasks it runs (it
   * reads {@link PostgresTaskStore.nodeId}). Without it there is no lease and nothing is reaped.
   */
  readonly nodeId?: string;
  /** How long the node's lease lasts without renewal (ms); renewed every third of it. Default 30 000. */
  readonly leaseMs?: number;
  /** Further lease settings (renewal interval, batch size). */
  readonly lease?: Omit<NodeLeaseConfig, 'leaseMs'>;
  /** Lease reaper settings; the interval defaults to `leaseMs / 3`. `intervalMs: 0` disables the reaper on this node. */
  readonly reaper?: LeaseReaperConfig;
}

/**
 * The clustered store: tasks are rows of `<schema>.tasks`, so every node sharing the database
 * answers for every task. Writes are compare-and-set on the status in SQL, expiry is judged by
 * the database clock, the owner's quota is exact under concurrency, and cancels and answers reach
 * the running node through LISTEN/NOTIFY on one connection per store (the runtime's poll of
 * {@link controlStates} is the backstop).
 */
export class PostgresTaskStore implements TaskStore {
  /** The schema the store reads and writes. */
  readonly schema: string;
  /** The LISTEN connection; exposed for its state and test signals. Connects on the first `watch`. */
  readonly listener: ControlListener;
  /** The TTL sweeper; exposed for `runOnce()` and its test signals. */
  readonly sweeper: TtlSweeper;
  /** The node this store holds a lease for (`undefined`: no lease); the runtime records it on tasks. */
  readonly nodeId: string | undefined;
  /** The node lease, when `nodeId` was given; exposed for its state and test signals. */
  readonly lease: NodeLease | undefined;
  /** The lease reaper (started by `connect` when there is a lease); exposed for `runOnce()` and its test signals. */
  readonly reaper: LeaseReaper;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #db: Kysely<TasksDatabase>;
  readonly #sql: SqlContext;
  readonly #logger: MaintenanceLogger;
  readonly #watchers = new Map<string, Set<(signal: TaskSignal) => void>>();
  readonly #followers = new Map<string, Set<() => void>>();
  #closed: Promise<void> | undefined;

  /** Opens a store; applies migrations first unless `migrate: false`, and starts the sweeper. */
  static async connect(options: PostgresTaskStoreOptions): Promise<PostgresTaskStore> {
    const store = new PostgresTaskStore(options);
    try {
      if (options.migrate ?? true) await migrate(store.#pool, store.schema);
    } catch (error) {
      await store.close();
      throw error;
    }
    if ((options.sweepIntervalMs ?? 60_000) > 0) store.sweeper.start();
    if (store.lease) {
      try {
        await store.lease.start();
      } catch (error) {
        await store.close();
        throw error;
      }
      if (options.reaper?.intervalMs !== 0) store.reaper.start();
    }
    return store;
  }

  /** Prefer {@link PostgresTaskStore.connect}: the constructor neither migrates nor starts the sweeper. */
  constructor(options: PostgresTaskStoreOptions) {
    if (!options.pool === !options.connectionString) throw new TypeError('give exactly one of connectionString and pool');
    this.schema = assertSchemaName(options.schema ?? DEFAULT_SCHEMA);
    this.#ownsPool = !options.pool;
    this.#pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 10 });
    if (this.#ownsPool) this.#pool.on('error', (error) => this.#logger.error('idle pool connection failed', error));
    // A connection the store holds between statements (the sweeper's and reaper's pinned lock
    // connection) that the server terminates emits 'error' with no listener, which would crash
    // the process; its next statement fails instead, and the pool discards it on release.
    if (this.#ownsPool) this.#pool.on('connect', (client) => client.on('error', (error) => this.#logger.warn('a pool connection failed', error)));
    this.#logger = options.logger ?? consoleLogger;
    this.#db = new Kysely<TasksDatabase>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    const channel = controlChannelOf(this.schema);
    this.#sql = sqlContext(this.#db, this.schema, channel);
    const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.sweeper = new TtlSweeper(this.#sql, this.schema, this.#logger, { ...options.sweeper, intervalMs: sweepIntervalMs > 0 ? sweepIntervalMs : 60_000 });
    this.nodeId = options.nodeId;
    const leaseMs = options.leaseMs ?? 30_000;
    this.lease =
      options.nodeId === undefined
        ? undefined
        : new NodeLease(this.#sql, options.nodeId, this.#logger, { ...options.lease, leaseMs }, () => void this.#rescanWatched());
    const reapIntervalMs = options.reaper?.intervalMs || Math.max(1, Math.floor(leaseMs / 3));
    this.reaper = new LeaseReaper(this.#sql, this.schema, this.#logger, { ...options.reaper, intervalMs: reapIntervalMs });
    this.listener = new ControlListener(
      listenerConnectionConfig(this.#pool),
      channel,
      {
        onMessage: (message) => this.#deliver(message),
        onListening: () => void this.#rescanWatched(),
        notify: async (notifyChannel, payload) => {
          await this.#pool.query('SELECT pg_notify($1, $2)', [notifyChannel, payload]);
        },
        logger: this.#logger,
      },
      options.listener,
    );
  }

  async create(task: NewTask, options: CreateOptions): Promise<TaskRecord> {
    validateNewTask(task);
    const statusMessage = task.statusMessage == null ? null : normaliseStatusMessage(task.statusMessage);
    return refuseUnstorableValue(() => createTask(this.#sql, task, statusMessage, options.maxLive));
  }

  async get(ref: TaskRef): Promise<TaskRecord | undefined> {
    validateRef(ref);
    return refuseUnstorableValue(() => getTask(this.#sql, ref));
  }

  async setStatusMessage(ref: TaskRef, statusMessage: string): Promise<TaskRecord | undefined> {
    validateRef(ref);
    return refuseUnstorableValue(() => setStatusMessage(this.#sql, ref, normaliseStatusMessage(statusMessage)));
  }

  async requestInput(ref: TaskRef, key: string, request: InputRequest): Promise<InputAsk> {
    validateRef(ref);
    validateInputRequest(key, request);
    return refuseUnstorableValue(() => requestInput(this.#sql, ref, key, request));
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

  async finish(ref: TaskRef, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    validateRef(ref);
    validateOutcome(outcome);
    return refuseUnstorableValue(() => finishTask(this.#sql, ref, outcome));
  }

  async controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>> {
    for (const ref of refs) validateRef(ref);
    return refuseUnstorableValue(() => readControlStates(this.#sql, refs));
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe {
    let listeners = this.#watchers.get(taskId);
    if (!listeners) this.#watchers.set(taskId, (listeners = new Set()));
    listeners.add(listener);
    if (!this.#closed) this.listener.start();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#watchers.get(taskId) === listeners) this.#watchers.delete(taskId);
    };
  }

  async follow(ref: TaskRef, listener: () => void): Promise<Unsubscribe | undefined> {
    validateRef(ref);
    if (!(await refuseUnstorableValue(() => followTask(this.#sql, ref)))) return undefined;
    let listeners = this.#followers.get(ref.taskId);
    if (!listeners) this.#followers.set(ref.taskId, (listeners = new Set()));
    listeners.add(listener);
    // Changes made before the listener listens are covered by its rescan, which pings followers.
    if (!this.#closed) this.listener.start();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#followers.get(ref.taskId) === listeners) this.#followers.delete(ref.taskId);
    };
  }

  /** How many tasks this store instance follows now (0 when no follower is left); for tests and metrics. */
  get followedTaskCount(): number {
    return this.#followers.size;
  }

  /**
   * Whether the database answers a `SELECT 1` through the store's pool within `timeoutMs` (a
   * readiness check): rejects otherwise, also when every pooled connection is busy that long.
   */
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

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#watchers.clear();
      this.#followers.clear();
      await Promise.allSettled([this.sweeper.stop(), this.reaper.stop(), this.listener.stop()]);
      // Last, after the runtime settled its runs: another node's reaper fails whatever is left.
      await this.lease?.stop();
      if (this.#ownsPool) {
        await this.#db.destroy();
        // Kysely ends the pool only if a query of its own ran; a store that only migrated has not.
        if (!this.#pool.ended) await this.#pool.end();
      }
    })();
    return this.#closed;
  }

  #deliver(message: ControlMessage): void {
    if (message.op !== 'status') this.#signal(message.taskId, message.op === 'cancel' ? { kind: 'cancelled' } : { kind: 'input' });
    this.#pingFollowers(message.taskId);
  }

  #pingFollowers(taskId: string): void {
    for (const listener of [...(this.#followers.get(taskId) ?? [])]) {
      try {
        listener();
      } catch (error) {
        this.#logger.error(`a follower of task ${taskId} threw`, error);
      }
    }
  }

  #signal(taskId: string, signal: TaskSignal): void {
    const listeners = this.#watchers.get(taskId);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(signal);
      } catch (error) {
        this.#logger.error(`a watcher of task ${taskId} threw`, error);
      }
    }
  }

  /**
   * Once the listener listens (first, or after a reconnect), notifications sent before are lost: re-read every
   * watched task and signal what changed (ended: cancelled; otherwise a wake so waiters re-read).
   */
  async #rescanWatched(): Promise<void> {
    for (const taskId of [...this.#followers.keys()]) this.#pingFollowers(taskId);
    const taskIds = [...this.#watchers.keys()];
    if (taskIds.length === 0) return;
    try {
      const states = await readWatchedStates(this.#sql, taskIds);
      for (const taskId of taskIds) {
        const status = states.get(taskId);
        this.#signal(taskId, status === undefined || isTerminal(status) ? { kind: 'cancelled' } : { kind: 'input' });
      }
    } catch (error) {
      this.#logger.warn('rescan after listener reconnect failed; waking every watcher', error);
      for (const taskId of taskIds) this.#signal(taskId, { kind: 'input' });
    }
  }
}

/** The application_name of the LISTEN connection, so operators can find it in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'mcp-tasks:listener';

/** The LISTEN connection's settings: the pool's, since it must reach the same server, directly. */
function listenerConnectionConfig(pool: pg.Pool): pg.ClientConfig {
  const { max: _max, min: _min, idleTimeoutMillis: _idle, ...clientConfig } = pool.options as pg.PoolConfig;
  return { ...clientConfig, application_name: LISTENER_APPLICATION_NAME };
}
