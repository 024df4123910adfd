import { computeClusterStats } from '../sql/compute-cluster-stats.js';
import { readClusterStats } from '../sql/read-cluster-stats.js';
import { recountFinishedTasks } from '../sql/recount-finished-tasks.js';
import type { SqlContext } from '../sql/sql-context.js';
import type { ClusterStats } from '../stats/cluster-stats.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link ClusterStatsService}; every field has a default. */
export interface ClusterStatsConfig {
  /** Time between rounds (ms): how stale the counts may be. Default 15 000. */
  readonly intervalMs?: number;
  /** Longest the count may hold the role (ms); its statement timeout. Default 5 000. */
  readonly batchTimeoutMs?: number;
  /**
   * How often the finished tasks kept until their TTL (completed, failed, cancelled) are counted
   * (ms); rounds in between count the live ones and carry the finished counts forward. Counting
   * them scans the whole history (7.7 s of a core over 10 million rows, docs/scale-out.md).
   * `false`: never (the counts hold live tasks only). Default 300 000.
   */
  readonly finishedIntervalMs?: number | false;
  /** Longest the count of the finished tasks may hold the role (ms). Default 60 000. */
  readonly finishedTimeoutMs?: number;
}

/** What one round did. */
export interface ClusterStatsRound {
  /** True when this node counted; false when another held the role or had counted within the interval. */
  readonly computed: boolean;
  readonly stats: ClusterStats | undefined;
}

const DEFAULTS = { intervalMs: 15_000, batchTimeoutMs: 5_000, finishedIntervalMs: 300_000, finishedTimeoutMs: 60_000 } as const;

/**
 * The cluster's task counts, for the cluster-wide gauges and the console: each round, the node
 * that gets the role counts (unless another node did within three quarters of the interval, so
 * the cluster counts about once per interval however many nodes it has), then every node reads
 * the one row and keeps it in memory. Scrapes and consoles read the memory, never the table.
 * A round counts the live tasks; the finished ones, the history, once per `finishedIntervalMs`.
 */
export class ClusterStatsService extends LeaderRoundService<ClusterStatsRound> {
  readonly config: Required<ClusterStatsConfig>;
  /** Test signal: each finished round. */
  readonly testSignals = { round: new TestSignal<ClusterStatsRound>() };
  readonly #context: SqlContext;
  readonly #nodeId: string;
  #latest: { stats: ClusterStats; readAt: number } | undefined;

  constructor(context: SqlContext, schema: string, nodeId: string, logger: MaintenanceLogger, config: ClusterStatsConfig = {}) {
    const resolved = withDefaults<ClusterStatsConfig>(DEFAULTS, config);
    const positive = (value: number) => Number.isSafeInteger(value) && value > 0;
    if (resolved.finishedIntervalMs !== false && !positive(resolved.finishedIntervalMs)) throw new RangeError('finishedIntervalMs must be a positive integer or false');
    if (!positive(resolved.finishedTimeoutMs)) throw new RangeError('finishedTimeoutMs must be a positive integer');
    super(context, `mcp-tasks:cluster-stats:${schema}`, { ...resolved, batchSize: 1, batchPauseMs: 0 }, 'cluster stats', logger);
    this.config = resolved;
    this.#context = context;
    this.#nodeId = nodeId;
  }

  /**
   * The counts this node last read (undefined before its first round), with the oldest live
   * task's age carried forward to now by the local monotonic clock.
   */
  get latest(): ClusterStats | undefined {
    if (!this.#latest) return undefined;
    const { stats, readAt } = this.#latest;
    const elapsed = Math.max(0, Math.round(performance.now() - readAt));
    const byTool = new Map([...stats.oldestLiveAgeMsByTool].map(([tool, ms]) => [tool, ms + elapsed]));
    return { ...stats, oldestLiveAgeMs: stats.oldestLiveAgeMs === null ? null : stats.oldestLiveAgeMs + elapsed, oldestLiveAgeMsByTool: byTool };
  }

  protected async round(): Promise<ClusterStatsRound> {
    const freshMs = Math.floor(this.config.intervalMs * 0.75);
    const led = await this.batch((context) => computeClusterStats(context, this.#nodeId, freshMs, this.config.finishedIntervalMs));
    if (led?.result.recountFinished) await this.#recountFinished();
    const stats = await readClusterStats(this.#context);
    if (stats) this.#latest = { stats, readAt: performance.now() };
    return { computed: led?.result.computed ?? false, stats };
  }

  /** The finished tasks counted again; a failure keeps the counts carried and waits for the next turn. */
  async #recountFinished(): Promise<void> {
    try {
      await this.batch((context) => recountFinishedTasks(context), this.config.finishedTimeoutMs);
    } catch (error) {
      this.logger.warn(`counting the finished tasks failed (finishedTimeoutMs ${this.config.finishedTimeoutMs}); their counts stay as they were until the next count is due`, error);
    }
  }

  protected skipped(): ClusterStatsRound {
    return { computed: false, stats: this.#latest?.stats };
  }

  protected finished(result: ClusterStatsRound): void {
    this.testSignals.round.signal(result);
  }
}
