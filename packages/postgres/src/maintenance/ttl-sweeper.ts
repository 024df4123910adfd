import { deleteExpiredTasks } from '../sql/delete-expired-tasks.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link TtlSweeper}; every field has a default. */
export interface TtlSweeperConfig {
  /** Time between sweeps (ms). Default 60 000. */
  readonly intervalMs?: number;
  /** Rows deleted per statement. Default 1 000. */
  readonly batchSize?: number;
  /** Longest pause between two batches (ms); each pause is half as long as the batch before it. Default 50. */
  readonly batchPauseMs?: number;
  /** Longest one batch may hold the sweeper's role (ms); a leader that stalls loses it then. Default 5 000. */
  readonly batchTimeoutMs?: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** False when another node held the sweep lock; nothing was deleted then. */
  readonly ran: boolean;
  readonly deleted: number;
  readonly batches: number;
}

const DEFAULTS = { intervalMs: 60_000, batchSize: 1_000, batchPauseMs: 50, batchTimeoutMs: 5_000 } as const;

/**
 * Deletes expired tasks (they already read as absent): every `intervalMs`, on one node at a time,
 * in short batches by primary key, until a batch comes back short.
 */
export class TtlSweeper extends LeaderRoundService<SweepResult> {
  readonly config: Required<TtlSweeperConfig>;
  /** Test signals: each finished sweep, and each batch deleted. */
  readonly testSignals = { swept: new TestSignal<SweepResult>(), batchDeleted: new TestSignal<number>() };

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: TtlSweeperConfig = {}) {
    const resolved = withDefaults<TtlSweeperConfig>(DEFAULTS, config);
    super(context, `mcp-tasks:ttl-sweeper:${schema}`, resolved, 'TTL sweep', logger);
    this.config = resolved;
  }

  protected async round(): Promise<SweepResult> {
    let deleted = 0;
    let batches = 0;
    for (;;) {
      const led = await this.batch((context) => deleteExpiredTasks(context, this.config.batchSize));
      if (!led) return batches === 0 ? this.skipped() : { ran: true, deleted, batches };
      const { result: count, tookMs } = led;
      deleted += count;
      batches += 1;
      this.testSignals.batchDeleted.signal(count);
      if (count < this.config.batchSize || this.stopRequested) break;
      await this.pauseAfter(tookMs);
    }
    return { ran: true, deleted, batches };
  }

  protected skipped(): SweepResult {
    return { ran: false, deleted: 0, batches: 0 };
  }

  protected finished(result: SweepResult): void {
    this.testSignals.swept.signal(result);
  }
}
