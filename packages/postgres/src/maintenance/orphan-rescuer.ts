import type { RunRegistry, Unsubscribe } from '@mcp-tasks/core';
import { failOrphanedTasks } from '../sql/fail-orphaned-tasks.js';
import { readLiveTasksOfNode } from '../sql/read-live-tasks-of-node.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LeaderRoundService } from './leader-round-service.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link OrphanRescuer}; every field has a default. */
export interface OrphanRescuerConfig {
  /** Time between rounds (ms). Default 30 000. */
  readonly intervalMs?: number;
  /** A task claimed (or changed) less than this long ago (ms) is never rescued: its run may be registering. Default 10 000. */
  readonly graceMs?: number;
  /** Tasks read per statement. Default 1 000. */
  readonly batchSize?: number;
  /** Longest pause between two batches (ms); each pause is half as long as the batch before it. Default 50. */
  readonly batchPauseMs?: number;
  /** Longest a batch may hold the rescuer's lock (ms); see `BatchedServiceConfig`. Default 5 000. */
  readonly batchTimeoutMs?: number;
}

/** What one round did. */
export interface RescueResult {
  /** False when no runtime was attached (nobody can say which tasks are held) or the round was skipped. */
  readonly ran: boolean;
  /** Live tasks of this node that no run held, failed now. */
  readonly rescued: number;
  readonly batches: number;
}

const DEFAULTS = { intervalMs: 30_000, graceMs: 10_000, batchSize: 1_000, batchPauseMs: 50, batchTimeoutMs: 5_000 } as const;

/**
 * Fails this node's live tasks that no run on this node holds (River's job rescuer, per node): a
 * run whose outcome could not be written after its retries, or any other way a run ends without
 * a terminal row, would otherwise leave its task live, holding a quota slot, until its TTL. The
 * lease reaper covers nodes that died; this covers a node that is alive. Only the node knows
 * which runs it holds (its runtime attaches a {@link RunRegistry}), so each node checks its own
 * rows (`node_id` = its id), and a round with no runtime attached does nothing. A task counts as
 * held from the moment it is committed or claimed (the grace, counted from the row's last change,
 * covers the instant before its run registers) until its run has written its outcome or given
 * up; a round fails only the attempt it read.
 */
export class OrphanRescuer extends LeaderRoundService<RescueResult> {
  readonly config: Required<OrphanRescuerConfig>;
  /** Test signals: each finished round. */
  readonly testSignals = { rescued: new TestSignal<RescueResult>() };
  readonly #nodeId: string;
  readonly #registries = new Set<RunRegistry>();

  constructor(context: SqlContext, schema: string, nodeId: string, logger: MaintenanceLogger, config: OrphanRescuerConfig = {}) {
    const resolved = withDefaults<OrphanRescuerConfig>(DEFAULTS, config);
    if (!(Number.isSafeInteger(resolved.graceMs) && resolved.graceMs >= 0)) throw new RangeError('graceMs must be a non-negative integer');
    // Keyed by node: two stores of one node never rescue at once, other nodes never wait.
    super(context, `mcp-tasks:orphan-rescuer:${schema}:${nodeId}`, resolved, 'orphan rescue', logger);
    this.config = resolved;
    this.#nodeId = nodeId;
  }

  /** Registers the runs of a runtime on this node; until the returned function runs, its tasks are not rescued. */
  attach(registry: RunRegistry): Unsubscribe {
    this.#registries.add(registry);
    return () => void this.#registries.delete(registry);
  }

  protected async round(): Promise<RescueResult> {
    let rescued = 0;
    let batches = 0;
    let afterId: string | null = null;
    while (this.#registries.size > 0 && !this.stopRequested) {
      const cursor: string | null = afterId;
      const led = await this.batch(async (context) => {
        const live = await readLiveTasksOfNode(context, this.#nodeId, this.config.graceMs, this.config.batchSize, cursor);
        // Asked after the read: a run that ended since then either wrote its outcome (the UPDATE's
        // compare-and-set skips the task) or gave up (the task is an orphan). A task claimed
        // again since the read has a new attempt, which the UPDATE's compare-and-set also skips.
        const registries = [...this.#registries];
        const orphans = live.filter((task) => !registries.some((registry) => registry.holds(task.id)));
        return { ids: live.map((task) => task.id), failed: registries.length === 0 ? 0 : await failOrphanedTasks(context, this.#nodeId, orphans) };
      });
      if (!led) break;
      const { result, tookMs } = led;
      batches += 1;
      rescued += result.failed;
      if (result.ids.length < this.config.batchSize) break;
      afterId = result.ids[result.ids.length - 1]!;
      await this.pauseAfter(tookMs);
    }
    return { ran: batches > 0, rescued, batches };
  }

  protected skipped(): RescueResult {
    return { ran: false, rescued: 0, batches: 0 };
  }

  protected finished(result: RescueResult): void {
    if (result.rescued > 0) this.logger.warn(`orphan rescuer failed ${result.rescued} task(s) of node ${this.#nodeId} that no run held`);
    this.testSignals.rescued.signal(result);
  }
}
