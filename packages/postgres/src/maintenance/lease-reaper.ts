import { sql } from 'kysely';
import { deleteSettledNodes } from '../sql/delete-settled-nodes.js';
import { failTasksOfExpiredNodes } from '../sql/fail-tasks-of-expired-nodes.js';
import { withExecutor, type SqlContext } from '../sql/sql-context.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link LeaseReaper}; every field has a default. */
export interface LeaseReaperConfig {
  /** Time between rounds (ms). Default 10 000 (the store uses `leaseMs / 3`). */
  readonly intervalMs?: number;
  /** Tasks failed per statement. Default 1 000. */
  readonly batchSize?: number;
  /** Pause between two batches of one round (ms). Default 50. */
  readonly batchPauseMs?: number;
}

/** What one round did. */
export interface ReapResult {
  /** False when another node held the reaper lock (it is the leader this round). */
  readonly ran: boolean;
  /** Tasks failed because their node's lease expired. */
  readonly failed: number;
  readonly batches: number;
  /** Expired lease rows deleted (their nodes have no live task left). */
  readonly nodesDeleted: number;
}

const DEFAULTS = { intervalMs: 10_000, batchSize: 1_000, batchPauseMs: 50 } as const;

/**
 * Fails the live tasks of nodes whose lease expired (Solid Queue's pruned-process semantics: a
 * tool call is not assumed idempotent, so it is not re-run), then forgets those nodes. Every node
 * runs it on a timer; a session advisory lock makes one of them the leader of each round and the
 * others skip it. Work goes in batches paginated by task id, each a compare-and-set UPDATE, with
 * a pause in between.
 */
export class LeaseReaper {
  readonly config: Required<LeaseReaperConfig>;
  /** Test signals: each finished round, each batch (tasks failed). */
  readonly testSignals = { reaped: new TestSignal<ReapResult>(), batchFailed: new TestSignal<number>() };
  readonly #context: SqlContext;
  readonly #lockKey: string;
  readonly #logger: MaintenanceLogger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<ReapResult> | undefined;
  #started = false;
  #stopRequested = false;

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: LeaseReaperConfig = {}) {
    this.config = withDefaults<LeaseReaperConfig>(DEFAULTS, config);
    const { intervalMs, batchSize, batchPauseMs } = this.config;
    if (!(Number.isSafeInteger(intervalMs) && intervalMs > 0)) throw new RangeError('intervalMs must be a positive integer');
    if (!(Number.isSafeInteger(batchSize) && batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
    if (!(Number.isSafeInteger(batchPauseMs) && batchPauseMs >= 0)) throw new RangeError('batchPauseMs must be a non-negative integer');
    this.#context = context;
    this.#lockKey = `mcp-tasks:lease-reaper:${schema}`;
    this.#logger = logger;
  }

  /** Reaps every `intervalMs` until {@link stop}. Idempotent. */
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
  runOnce(): Promise<ReapResult> {
    this.#running ??= this.#reap().finally(() => (this.#running = undefined));
    return this.#running;
  }

  #schedule(): void {
    if (!this.#started) return;
    // Jitter, so the nodes of a cluster do not all try the lock at the same instant.
    const delay = Math.round(this.config.intervalMs * (0.75 + Math.random() / 2));
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch((error: unknown) => this.#logger.error('lease reaping failed', error))
        .finally(() => this.#schedule());
    }, delay);
    this.#timer.unref();
  }

  async #reap(): Promise<ReapResult> {
    const result = await this.#context.db.connection().execute(async (connection) => {
      const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(hashtextextended(${this.#lockKey}, 0)) AS locked`.execute(connection);
      if (!locked.rows[0]?.locked) return { ran: false, failed: 0, batches: 0, nodesDeleted: 0 };
      try {
        const context = withExecutor(this.#context, connection);
        let failed = 0;
        let batches = 0;
        let afterId: string | null = null;
        for (;;) {
          const page = await failTasksOfExpiredNodes(context, this.config.batchSize, afterId);
          failed += page.failed;
          batches += 1;
          this.testSignals.batchFailed.signal(page.failed);
          if (page.lastId === null || this.#stopRequested) break;
          afterId = page.lastId;
          await new Promise((resolve) => setTimeout(resolve, this.config.batchPauseMs));
        }
        const nodesDeleted = this.#stopRequested ? 0 : await deleteSettledNodes(context, this.config.batchSize);
        return { ran: true, failed, batches, nodesDeleted };
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtextextended(${this.#lockKey}, 0))`.execute(connection);
      }
    });
    if (result.failed > 0) this.#logger.warn(`lease reaper failed ${result.failed} task(s) of nodes whose lease expired`);
    this.testSignals.reaped.signal(result);
    return result;
  }
}
