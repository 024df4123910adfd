import { sql } from 'kysely';
import { deleteExpiredTasks } from '../sql/delete-expired-tasks.js';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link TtlSweeper}; every field has a default. */
export interface TtlSweeperConfig {
  /** Time between sweeps (ms). Default 60 000. */
  readonly intervalMs?: number;
  /** Rows deleted per statement. Default 1 000. */
  readonly batchSize?: number;
  /**
   * Longest pause between two batches of one sweep (ms). The pause is as long as the batch before
   * it, up to this: the sweeper then takes at most half of a connection's time and of the rows'
   * lock time, however slow the database is, yet a backlog of a million rows is not stretched by a
   * fixed sleep per batch. Default 50.
   */
  readonly batchPauseMs?: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** False when another node held the sweep lock; nothing was deleted then. */
  readonly ran: boolean;
  readonly deleted: number;
  readonly batches: number;
}

const DEFAULTS = { intervalMs: 60_000, batchSize: 1_000, batchPauseMs: 50 } as const;

/**
 * Deletes expired tasks (they already read as absent): every `intervalMs`, on one node at a time
 * (a session advisory lock on a pinned connection), in short batches by primary key with a pause
 * as long as the batch in between, until a batch comes back short.
 */
export class TtlSweeper {
  readonly config: Required<TtlSweeperConfig>;
  /** Test signals: each finished sweep, and each batch deleted. */
  readonly testSignals = { swept: new TestSignal<SweepResult>(), batchDeleted: new TestSignal<number>() };
  readonly #context: SqlContext;
  readonly #lockKey: string;
  readonly #logger: MaintenanceLogger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<SweepResult> | undefined;
  #started = false;
  #stopRequested = false;

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: TtlSweeperConfig = {}) {
    this.config = withDefaults<TtlSweeperConfig>(DEFAULTS, config);
    const { intervalMs, batchSize, batchPauseMs } = this.config;
    if (!(Number.isSafeInteger(intervalMs) && intervalMs > 0)) throw new RangeError('intervalMs must be a positive integer');
    if (!(Number.isSafeInteger(batchSize) && batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
    if (!(Number.isSafeInteger(batchPauseMs) && batchPauseMs >= 0)) throw new RangeError('batchPauseMs must be a non-negative integer');
    this.#context = context;
    this.#lockKey = `mcp-tasks:ttl-sweeper:${schema}`;
    this.#logger = logger;
  }

  /** Sweeps every `intervalMs` until {@link stop}. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#stopRequested = false;
    this.#schedule();
  }

  /** Stops the timer and waits for a sweep in progress to end (it stops between batches). */
  async stop(): Promise<void> {
    this.#started = false;
    this.#stopRequested = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  /** One sweep now (also what the timer runs). Sweeps on one instance never overlap. */
  runOnce(): Promise<SweepResult> {
    this.#running ??= this.#sweep().finally(() => (this.#running = undefined));
    return this.#running;
  }

  #schedule(): void {
    if (!this.#started) return;
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch((error: unknown) => this.#logger.error('TTL sweep failed', error))
        .finally(() => this.#schedule());
    }, this.config.intervalMs);
    this.#timer.unref();
  }

  async #sweep(): Promise<SweepResult> {
    const result = await this.#context.db.connection().execute(async (connection) => {
      // A session lock on one pinned connection: held across batches, each batch its own short
      // transaction. Other nodes skip this round instead of queueing behind it.
      const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(hashtextextended(${this.#lockKey}, 0)) AS locked`.execute(connection);
      if (!locked.rows[0]?.locked) return { ran: false, deleted: 0, batches: 0 };
      try {
        const context = withExecutor(this.#context, connection);
        let deleted = 0;
        let batches = 0;
        for (;;) {
          const started = performance.now();
          const count = await deleteExpiredTasks(context, this.config.batchSize);
          const tookMs = performance.now() - started;
          deleted += count;
          batches += 1;
          this.testSignals.batchDeleted.signal(count);
          if (count < this.config.batchSize || this.#stopRequested) break;
          await new Promise((resolve) => setTimeout(resolve, Math.min(this.config.batchPauseMs, Math.ceil(tookMs))));
        }
        return { ran: true, deleted, batches };
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtextextended(${this.#lockKey}, 0))`.execute(connection);
      }
    });
    this.testSignals.swept.signal(result);
    return result;
  }
}
