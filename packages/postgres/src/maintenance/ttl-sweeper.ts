import { deleteExpiredStorage } from '../sql/delete-expired-storage.js';
import { deleteExpiredTasks } from '../sql/delete-expired-tasks.js';
import { dropTaskPartition } from '../sql/drop-task-partition.js';
import { listExpiredTaskPartitions } from '../sql/list-expired-task-partitions.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link TtlSweeper}; every field has a default. */
export interface TtlSweeperConfig {
  /** Time between sweeps (ms). Default 60 000. */
  readonly intervalMs?: number;
  /** Most rows deleted per statement. Default 1 000. */
  readonly batchSize?: number;
  /**
   * The time one batch's DELETE should take (ms). A slower one (a checkpoint, a busy disk) makes the
   * next batch smaller in proportion, down to `minBatchSize`; one under half of it doubles the next,
   * up to `batchSize`. The size carries over from sweep to sweep. Default 20; `Infinity`: always `batchSize`.
   */
  readonly targetBatchMs?: number;
  /** Fewest rows a batch shrinks to. Default 100. */
  readonly minBatchSize?: number;
  /** Longest pause between two batches (ms); each pause is half as long as the batch before it. Default 50. */
  readonly batchPauseMs?: number;
  /** Longest one batch may hold the sweeper's role (ms); a leader that stalls loses it then. Default 5 000. */
  readonly batchTimeoutMs?: number;
  /**
   * Longest the detach of an ended hour's partition waits for its moment of exclusive lock on the
   * table (ms); requests queue behind a waiting detach, so this is also the most it delays them.
   * Default 100.
   */
  readonly partitionLockTimeoutMs?: number;
  /** Tries of one detach that timed out on its lock, in one sweep; the next sweep tries again. Default 3. */
  readonly partitionDropAttempts?: number;
}

/** One hour dropped: its tasks partition's name and how long the detaches and drops of its three partitions took (ms). */
export interface PartitionDrop {
  readonly name: string;
  readonly tookMs: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** False when another node held the sweep lock; nothing was deleted then. */
  readonly ran: boolean;
  readonly deleted: number;
  readonly batches: number;
}

/** One batch as the sweeper saw it: how many rows it asked for and deleted, and how long its DELETE took. */
export interface SweepBatch {
  readonly size: number;
  readonly deleted: number;
  readonly tookMs: number;
}

const DEFAULTS = {
  intervalMs: 60_000,
  batchSize: 1_000,
  targetBatchMs: 20,
  minBatchSize: 100,
  batchPauseMs: 50,
  batchTimeoutMs: 5_000,
  partitionLockTimeoutMs: 100,
  partitionDropAttempts: 3,
} as const;

/** SQLSTATE lock_not_available: a lock_timeout ran out. */
const LOCK_TIMEOUT = '55P03';

/**
 * Deletes expired tasks (they already read as absent): every `intervalMs`, on one node at a time.
 * First the hourly partitions whose hour has ended (migrations 0032, 0035) leave whole: the hour's
 * steps, events and tasks partitions, each detached and dropped under a short lock timeout, retried. Then the
 * `'infinity'` partition's expired rows, in short batches in expiry order, each starting where the
 * one before it stopped, until a batch comes back short.
 */
export class TtlSweeper extends LeaderRoundService<SweepResult> {
  readonly config: Required<TtlSweeperConfig>;
  /** Test signals: each finished sweep, each batch deleted (its row count), and each batch's size and time. */
  readonly testSignals = {
    swept: new TestSignal<SweepResult>(),
    batchDeleted: new TestSignal<number>(),
    batch: new TestSignal<SweepBatch>(),
    partitionDropped: new TestSignal<PartitionDrop>(),
  };
  #deleted = 0;
  #partitionsDropped = 0;
  #lastRanAt: Date | undefined;
  #size: number;

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: TtlSweeperConfig = {}) {
    const resolved = withDefaults<TtlSweeperConfig>(DEFAULTS, config);
    if (!(resolved.targetBatchMs > 0)) throw new RangeError('sweeper.targetBatchMs must be a positive number of ms (or Infinity)');
    if (!(Number.isSafeInteger(resolved.partitionLockTimeoutMs) && resolved.partitionLockTimeoutMs > 0)) {
      throw new RangeError('sweeper.partitionLockTimeoutMs must be a positive integer');
    }
    if (!(Number.isSafeInteger(resolved.partitionDropAttempts) && resolved.partitionDropAttempts > 0)) {
      throw new RangeError('sweeper.partitionDropAttempts must be a positive integer');
    }
    if (!(Number.isSafeInteger(resolved.minBatchSize) && resolved.minBatchSize > 0 && resolved.minBatchSize <= resolved.batchSize)) {
      throw new RangeError('sweeper.minBatchSize must be a positive integer no larger than batchSize');
    }
    // Asynchronous commits: a batch never waits for its WAL flush, which is where a checkpoint's
    // fsyncs stall it. A crash can only bring back rows that had expired (they read as absent),
    // and the next sweep deletes them again: the sweep is idempotent.
    super(context, `mcp-tasks:ttl-sweeper:${schema}`, resolved, 'TTL sweep', logger, { asynchronous: true });
    this.config = resolved;
    this.#size = resolved.batchSize;
  }

  /** Rows the next batch asks for. */
  get batchSize(): number {
    return this.#size;
  }

  protected async round(): Promise<SweepResult> {
    if (!(await this.#dropEndedPartitions())) return this.skipped();
    let deleted = 0;
    let batches = 0;
    // Where the next batch starts in the expiry index: at the last expiry this sweep deleted.
    let from: Date | undefined;
    for (;;) {
      const size = this.#size;
      // The DELETE alone is what grows with the batch (and what holds its row locks); the
      // transaction's other round trips cost the same at any size.
      let deleteMs = 0;
      const led = await this.batch(async (context) => {
        const started = performance.now();
        const outcome = await deleteExpiredTasks(context, size, from);
        deleteMs = performance.now() - started;
        return outcome;
      });
      if (!led) return batches === 0 ? this.skipped() : { ran: true, deleted, batches };
      const { result, tookMs } = led;
      const count = result.deleted;
      from = result.lastExpiresAt ?? from;
      deleted += count;
      batches += 1;
      this.#size = this.#nextSize(size, deleteMs);
      this.testSignals.batchDeleted.signal(count);
      this.testSignals.batch.signal({ size, deleted: count, tookMs: deleteMs });
      if (count < size || this.stopRequested) break;
      await this.pauseAfter(tookMs);
    }
    // The stored-bytes counters of minutes gone by: a few rows per pool, one short batch.
    if (!this.stopRequested) await this.batch((context) => deleteExpiredStorage(context, this.config.batchSize));
    return { ran: true, deleted, batches };
  }

  /**
   * Drops every hourly partition whose hour has ended; false when another node holds the role.
   * A partition whose detach kept timing out stays for the next sweep, as does the rest of the
   * list when the role is lost or the sweeper stops.
   */
  async #dropEndedPartitions(): Promise<boolean> {
    const listed = await this.batch((context) => listExpiredTaskPartitions(context));
    if (!listed) return false;
    for (const partition of listed.result) {
      if (this.stopRequested) break;
      await this.#dropHour(partition.name);
    }
    return true;
  }

  /**
   * The hour's steps and events partitions, then its tasks' (migration 0035), each in a
   * transaction of its own, holding one parent's lock at a time. The tasks' goes last, so an hour
   * whose drop stopped halfway is listed again by the next sweep.
   */
  async #dropHour(name: string): Promise<void> {
    const hour = name.slice('tasks'.length);
    let tookMs = 0;
    for (const table of [`task_steps${hour}`, `task_events${hour}`, name]) {
      const dropped = await this.#dropPartition(table);
      if (!dropped) return;
      tookMs += dropped.tookMs;
      // The tasks' partition gone already: another leader finished the hour meanwhile.
      if (table === name && !dropped.result) return;
    }
    this.#partitionsDropped += 1;
    this.testSignals.partitionDropped.signal({ name, tookMs });
  }

  /** The drop of one partition (`result` false when it was gone already), or undefined when it was not dropped this sweep. */
  async #dropPartition(name: string): Promise<{ result: boolean; tookMs: number } | undefined> {
    const { partitionLockTimeoutMs, partitionDropAttempts } = this.config;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.batch((context) => dropTaskPartition(context, name, partitionLockTimeoutMs));
      } catch (error) {
        const timedOut = (error as { code?: unknown } | null)?.code === LOCK_TIMEOUT;
        if (!timedOut || attempt >= partitionDropAttempts || this.stopRequested) {
          this.logger.warn(`TTL sweep: partition ${name} not dropped this sweep (${timedOut ? 'its lock stayed taken' : 'an error'})`, error);
          return undefined;
        }
        // Readers and writers holding the table finish in a moment; wait a little longer each time.
        await new Promise((resolve) => setTimeout(resolve, partitionLockTimeoutMs * attempt));
      }
    }
  }

  /** A batch's cost is bounded by its size: smaller after a slow one, larger again after fast ones. */
  #nextSize(size: number, tookMs: number): number {
    const { targetBatchMs, minBatchSize, batchSize } = this.config;
    if (tookMs > targetBatchMs) return Math.max(minBatchSize, Math.floor((size * targetBatchMs) / tookMs));
    if (tookMs < targetBatchMs / 2) return Math.min(batchSize, size * 2);
    return size;
  }

  protected skipped(): SweepResult {
    return { ran: false, deleted: 0, batches: 0 };
  }

  /** Expired tasks this node's rounds deleted, since it started. */
  get deleted(): number {
    return this.#deleted;
  }

  /** Hourly partitions this node's rounds dropped, since it started. */
  get partitionsDropped(): number {
    return this.#partitionsDropped;
  }

  /** When this node last ran a round as the leader (another node may be leading meanwhile). */
  get lastRanAt(): Date | undefined {
    return this.#lastRanAt;
  }

  protected finished(result: SweepResult): void {
    this.#deleted += result.deleted;
    if (result.ran) this.#lastRanAt = new Date();
    this.testSignals.swept.signal(result);
  }
}
