import { sql } from 'kysely';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import type { MaintenanceLogger } from './maintenance-logger.js';

/** What every batched maintenance service is configured with. */
export interface BatchedServiceConfig {
  /** Time between rounds (ms). */
  readonly intervalMs: number;
  /** Rows per statement. */
  readonly batchSize: number;
  /**
   * Longest pause between two batches of one round (ms). The pause is half as long as the batch
   * before it, up to this, so a round leaves at least a third of its time to other work however
   * slow the database is, yet a large backlog is not stretched by a fixed sleep per batch.
   */
  readonly batchPauseMs: number;
}

/** Checks a batched service's configuration once, at construction. */
export function assertBatchedServiceConfig(config: BatchedServiceConfig): void {
  if (!(Number.isSafeInteger(config.intervalMs) && config.intervalMs > 0)) throw new RangeError('intervalMs must be a positive integer');
  if (!(Number.isSafeInteger(config.batchSize) && config.batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
  if (!(Number.isSafeInteger(config.batchPauseMs) && config.batchPauseMs >= 0)) throw new RangeError('batchPauseMs must be a non-negative integer');
}

/**
 * The shape of a maintenance service (River's): `start`/`stop`, a jittered timer that calls
 * `runOnce`, rounds that never overlap on one instance, and one leader per round across the
 * cluster — a session advisory lock on a pinned connection, held across the round's batches
 * (each its own short statement); nodes that do not get it skip the round instead of queueing.
 */
export abstract class LeaderRoundService<Result> {
  readonly #context: SqlContext;
  readonly #lockKey: string;
  readonly #timing: BatchedServiceConfig;
  readonly #name: string;
  protected readonly logger: MaintenanceLogger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<Result> | undefined;
  #started = false;
  #stopRequested = false;

  protected constructor(context: SqlContext, lockKey: string, timing: BatchedServiceConfig, name: string, logger: MaintenanceLogger) {
    assertBatchedServiceConfig(timing);
    this.#context = context;
    this.#lockKey = lockKey;
    this.#timing = timing;
    this.#name = name;
    this.logger = logger;
  }

  /** Runs a round every interval until {@link stop}. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#stopRequested = false;
    this.#schedule();
  }

  /** Stops the timer and waits for a round in progress (it stops between batches). */
  async stop(): Promise<void> {
    this.#started = false;
    this.#stopRequested = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  /** One round now (also what the timer runs). Rounds on one instance never overlap. */
  runOnce(): Promise<Result> {
    this.#running ??= this.#lead().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Whether {@link stop} was called: a round checks it between batches. */
  protected get stopRequested(): boolean {
    return this.#stopRequested;
  }

  /** The round's work, on the pinned connection, while this node leads. */
  protected abstract round(context: SqlContext): Promise<Result>;

  /** The result of a round another node led. */
  protected abstract skipped(): Result;

  /** Called with every round's result, led or skipped. */
  protected abstract finished(result: Result): void;

  /** Runs one batch of a round and says how long it took. */
  protected async timed<T>(work: () => Promise<T>): Promise<{ result: T; tookMs: number }> {
    const started = performance.now();
    const result = await work();
    return { result, tookMs: performance.now() - started };
  }

  /** The pause before the next batch: half as long as the last one took, at most `batchPauseMs`. */
  protected pauseAfter(tookMs: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.min(this.#timing.batchPauseMs, Math.ceil(tookMs / 2))));
  }

  async #lead(): Promise<Result> {
    const result = await this.#context.db.connection().execute(async (connection) => {
      const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(hashtextextended(${this.#lockKey}, 0)) AS locked`.execute(connection);
      if (!locked.rows[0]?.locked) return this.skipped();
      try {
        return await this.round(withExecutor(this.#context, connection));
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtextextended(${this.#lockKey}, 0))`.execute(connection);
      }
    });
    this.finished(result);
    return result;
  }

  #schedule(): void {
    if (!this.#started) return;
    // Jitter, so the nodes of a cluster do not all try the lock at the same instant.
    const delay = Math.round(this.#timing.intervalMs * (0.75 + Math.random() / 2));
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch((error: unknown) => this.logger.error(`${this.#name} failed`, error))
        .finally(() => this.#schedule());
    }, delay);
    this.#timer.unref();
  }
}
