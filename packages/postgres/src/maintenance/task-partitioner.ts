import { makeTaskPartitions } from '../sql/make-task-partitions.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link TaskPartitioner}; every field has a default. */
export interface TaskPartitionerConfig {
  /** Time between rounds (ms). Default 600 000 (ten minutes: several rounds per hour made ahead). */
  readonly intervalMs?: number;
  /**
   * Hours made ahead of the current one. A task goes to an hourly partition only when its expiry
   * falls before the last one made (otherwise to the `'infinity'` partition, swept row by row), so
   * this bounds the TTLs that leave by partition: the default TTL (an hour) needs 1 or 2, and the
   * margin covers rounds missed while no node led. Each one costs reads by id one more index
   * probe. Default 3.
   */
  readonly hoursAhead?: number;
  /** Longest a round may hold the role (ms): its lock and statement timeouts. Default 5 000. */
  readonly batchTimeoutMs?: number;
}

/** What one round did. */
export interface PartitionRound {
  /** False when another node held the role. */
  readonly ran: boolean;
  /** Partitions made by this round (the ones that already existed are not counted). */
  readonly made: number;
}

const DEFAULTS = { intervalMs: 600_000, hoursAhead: 3, batchTimeoutMs: 5_000 } as const;

/**
 * Makes the hourly partitions of `tasks` ahead of time (migration 0032), on one node at a time:
 * each round makes the missing ones from the current hour to `hoursAhead` after it, in one short
 * transaction (attaching an empty table lets reads and writes go on). The TTL sweeper drops them
 * once their hour has ended. A node starts with a round, so a fresh cluster has its partitions at
 * once; until then, and whenever no round has run for longer than the hours ahead, creates go to
 * the `'infinity'` partition: nothing fails, rows just leave row by row.
 */
export class TaskPartitioner extends LeaderRoundService<PartitionRound> {
  readonly config: Required<TaskPartitionerConfig>;
  /** Test signal: each finished round. */
  readonly testSignals = { round: new TestSignal<PartitionRound>() };

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: TaskPartitionerConfig = {}) {
    const resolved = withDefaults<TaskPartitionerConfig>(DEFAULTS, config);
    if (!(Number.isSafeInteger(resolved.hoursAhead) && resolved.hoursAhead >= 1 && resolved.hoursAhead <= 168)) {
      throw new RangeError('partitions.hoursAhead must be an integer from 1 to 168');
    }
    super(context, `mcp-tasks:task-partitioner:${schema}`, { ...resolved, batchSize: 1, batchPauseMs: 0 }, 'task partitions', logger);
    this.config = resolved;
  }

  protected async round(): Promise<PartitionRound> {
    const led = await this.batch((context) => makeTaskPartitions(context, this.config.hoursAhead));
    return led ? { ran: true, made: led.result } : this.skipped();
  }

  protected skipped(): PartitionRound {
    return { ran: false, made: 0 };
  }

  protected finished(result: PartitionRound): void {
    this.testSignals.round.signal(result);
  }
}
