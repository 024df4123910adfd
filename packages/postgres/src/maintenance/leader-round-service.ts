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
  /**
   * Longest a batch may hold the leader's lock (ms): its transaction's lock, statement and
   * idle-in-transaction timeouts. A leader that stalls (a statement blocked on a row lock, a
   * paused process) loses the role within this, and another node leads the next round.
   */
  readonly batchTimeoutMs: number;
}

/** How a service's batches commit. */
export interface BatchCommit {
  /**
   * Commit without waiting for the WAL flush (`synchronous_commit = off` for the batch's
   * transaction only). Only for work that is safe to lose in a crash and redo: a crash may undo
   * the last few hundred milliseconds of such commits, never corrupt them, and the next round
   * does them again. Default false: the server's own `synchronous_commit` (which may be stricter
   * than `on`, as `remote_apply`) stays.
   */
  readonly asynchronous?: boolean;
}

/** Checks a batched service's configuration once, at construction. */
export function assertBatchedServiceConfig(config: BatchedServiceConfig): void {
  if (!(Number.isSafeInteger(config.intervalMs) && config.intervalMs > 0)) throw new RangeError('intervalMs must be a positive integer');
  if (!(Number.isSafeInteger(config.batchSize) && config.batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
  if (!(Number.isSafeInteger(config.batchPauseMs) && config.batchPauseMs >= 0)) throw new RangeError('batchPauseMs must be a non-negative integer');
  if (!(Number.isSafeInteger(config.batchTimeoutMs) && config.batchTimeoutMs > 0)) throw new RangeError('batchTimeoutMs must be a positive integer');
}

/**
 * The shape of a maintenance service (River's): `start`/`stop`, a jittered timer that calls
 * `runOnce`, rounds that never overlap on one instance, and one leader at a time across the
 * cluster: each batch is a transaction that takes a transaction-scoped advisory lock, with lock,
 * statement and idle-in-transaction timeouts of `batchTimeoutMs`, so the role is never held
 * longer than one bounded batch (a leader that stalls loses it; a session lock on a pinned
 * connection would keep it as long as the connection lives). A node that does not get the lock
 * skips the round instead of queueing; a round whose later batch finds it taken stops there.
 */
export abstract class LeaderRoundService<Result> {
  readonly #context: SqlContext;
  readonly #lockKey: string;
  readonly #timing: BatchedServiceConfig;
  readonly #name: string;
  readonly #asynchronousCommit: boolean;
  protected readonly logger: MaintenanceLogger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<Result> | undefined;
  #started = false;
  #stopRequested = false;

  protected constructor(context: SqlContext, lockKey: string, timing: BatchedServiceConfig, name: string, logger: MaintenanceLogger, commit: BatchCommit = {}) {
    assertBatchedServiceConfig(timing);
    this.#asynchronousCommit = commit.asynchronous ?? false;
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

  /** The round's work: batches run through {@link batch}; the first one not led means skipped. */
  protected abstract round(): Promise<Result>;

  /** The result of a round another node led. */
  protected abstract skipped(): Result;

  /** Called with every round's result, led or skipped. */
  protected abstract finished(result: Result): void;

  /**
   * Runs one batch as the leader, in a transaction of its own that holds the role's lock until
   * it commits, and says how long it took; `undefined` when another node holds the role.
   * `timeoutMs` bounds this batch instead of `batchTimeoutMs` (a rare scan that needs longer).
   */
  protected async batch<T>(work: (context: SqlContext) => Promise<T>, timeoutMs = this.#timing.batchTimeoutMs): Promise<{ result: T; tookMs: number } | undefined> {
    const started = performance.now();
    const timeout = `${timeoutMs}ms`;
    const outcome = await this.#context.db.transaction().execute(async (trx) => {
      // One round trip: the settings, then the lock (a try-lock never waits, so lock_timeout has nothing to bound there).
      const locked = await sql<{ locked: boolean }>`
        SELECT set_config('lock_timeout', ${timeout}, true), set_config('statement_timeout', ${timeout}, true),
               set_config('idle_in_transaction_session_timeout', ${timeout}, true),
               set_config('synchronous_commit', coalesce(${this.#asynchronousCommit ? 'off' : null}, current_setting('synchronous_commit')), true),
               pg_try_advisory_xact_lock(hashtextextended(${this.#lockKey}, 0)) AS locked`.execute(trx);
      if (!locked.rows[0]?.locked) return undefined;
      return { result: await work(withExecutor(this.#context, trx)) };
    });
    return outcome && { result: outcome.result, tookMs: performance.now() - started };
  }

  /** The pause before the next batch: half as long as the last one took, at most `batchPauseMs`. */
  protected pauseAfter(tookMs: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.min(this.#timing.batchPauseMs, Math.ceil(tookMs / 2))));
  }

  async #lead(): Promise<Result> {
    const result = await this.round();
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
