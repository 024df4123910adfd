import { deleteSettledNodes } from '../sql/delete-settled-nodes.js';
import { failTasksOfExpiredNodes } from '../sql/fail-tasks-of-expired-nodes.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link LeaseReaper}; every field has a default. */
export interface LeaseReaperConfig {
  /** Time between rounds (ms). Default 10 000 (the store uses `leaseMs / 3`). */
  readonly intervalMs?: number;
  /** Tasks failed per statement. Default 1 000. */
  readonly batchSize?: number;
  /** Longest pause between two batches (ms); each pause is half as long as the batch before it. Default 50. */
  readonly batchPauseMs?: number;
  /** Longest one batch may hold the reaper's role (ms); a leader that stalls loses it then. Default 5 000. */
  readonly batchTimeoutMs?: number;
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

const DEFAULTS = { intervalMs: 10_000, batchSize: 1_000, batchPauseMs: 50, batchTimeoutMs: 5_000 } as const;

/**
 * Fails the live tasks of nodes whose lease expired (Solid Queue's pruned-process semantics: a
 * tool call is not assumed idempotent, so it is not re-run), then forgets those nodes. Every node
 * runs it on a timer and one leads each round. Work goes in batches paginated by task id, each a
 * compare-and-set UPDATE.
 */
export class LeaseReaper extends LeaderRoundService<ReapResult> {
  readonly config: Required<LeaseReaperConfig>;
  /** Test signals: each finished round, each batch (tasks failed). */
  readonly testSignals = { reaped: new TestSignal<ReapResult>(), batchFailed: new TestSignal<number>() };
  #reaped = 0;

  constructor(context: SqlContext, schema: string, logger: MaintenanceLogger, config: LeaseReaperConfig = {}) {
    const resolved = withDefaults<LeaseReaperConfig>(DEFAULTS, config);
    super(context, `mcp-tasks:lease-reaper:${schema}`, resolved, 'lease reaping', logger);
    this.config = resolved;
  }

  protected async round(): Promise<ReapResult> {
    let failed = 0;
    let batches = 0;
    let afterId: string | null = null;
    for (;;) {
      const led = await this.batch((context) => failTasksOfExpiredNodes(context, this.config.batchSize, afterId));
      if (!led) return batches === 0 ? this.skipped() : { ran: true, failed, batches, nodesDeleted: 0 };
      const { result: page, tookMs } = led;
      failed += page.failed;
      batches += 1;
      this.testSignals.batchFailed.signal(page.failed);
      if (page.lastId === null || this.stopRequested) break;
      afterId = page.lastId;
      await this.pauseAfter(tookMs);
    }
    const nodesDeleted = this.stopRequested ? 0 : ((await this.batch((context) => deleteSettledNodes(context, this.config.batchSize)))?.result ?? 0);
    return { ran: true, failed, batches, nodesDeleted };
  }

  protected skipped(): ReapResult {
    return { ran: false, failed: 0, batches: 0, nodesDeleted: 0 };
  }

  /** Tasks this node's rounds failed because their node's lease expired, since it started. */
  get reaped(): number {
    return this.#reaped;
  }

  protected finished(result: ReapResult): void {
    this.#reaped += result.failed;
    if (result.failed > 0) this.logger.warn(`lease reaper failed ${result.failed} task(s) of nodes whose lease expired`);
    this.testSignals.reaped.signal(result);
  }
}
