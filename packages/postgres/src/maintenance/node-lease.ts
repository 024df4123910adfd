import { failTasksOfNode } from '../sql/fail-tasks-of-node.js';
import type { LeaseFailureReason } from '../sql/lease-error.js';
import { registerNode } from '../sql/register-node.js';
import { releaseNodeLease } from '../sql/release-node-lease.js';
import { renewNodeLease } from '../sql/renew-node-lease.js';
import type { SqlContext } from '../sql/sql-context.js';
import type { MaintenanceLogger } from './maintenance-logger.js';
import { TestSignal } from './test-signal.js';
import { withDefaults } from './with-defaults.js';

/** Configuration of {@link NodeLease}; every field has a default. */
export interface NodeLeaseConfig {
  /** How long a lease lasts without renewal (ms). Default 30 000. */
  readonly leaseMs?: number;
  /** Time between renewals (ms). Default `leaseMs / 3`. */
  readonly renewIntervalMs?: number;
  /** Tasks failed per statement when the node settles its own tasks. Default 1 000. */
  readonly batchSize?: number;
}

/** Where a lease stands. */
export type NodeLeaseState = 'idle' | 'held' | 'released';

const DEFAULTS = { leaseMs: 30_000, renewIntervalMs: 0, batchSize: 1_000 } as const;

/**
 * This node's lease row in `<schema>.nodes`: registered at start, renewed every `leaseMs / 3`,
 * released on stop. While it is held, the node's live tasks are its own; once it expires (a
 * crash, a partition, a long pause) any node's {@link LeaseReaper} fails them.
 *
 * Registering settles an earlier incarnation under the same id: its live tasks are failed
 * ("node X restarted"), since no run of them exists in this process. A renewal is compare-and-set
 * on "not expired and still mine"; when it fails the lease is lost, and the node does what the
 * reaper does, for its own tasks: fails every live task it holds ("node X lease expired"), which
 * also announces a cancel that aborts the runs here, then registers afresh (`onLost` is told).
 * Writes of those runs then lose their compare-and-set instead of reviving a failed task.
 */
export class NodeLease {
  readonly nodeId: string;
  readonly config: Required<NodeLeaseConfig>;
  /** Test signals: each renewal (the new expiry), each lost lease, each registration. */
  readonly testSignals = { renewed: new TestSignal<Date>(), lost: new TestSignal<number>(), registered: new TestSignal<number>() };
  readonly #context: SqlContext;
  readonly #logger: MaintenanceLogger;
  readonly #onLost: () => void;
  #startedAt: Date | undefined;
  #state: NodeLeaseState = 'idle';
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;

  constructor(context: SqlContext, nodeId: string, logger: MaintenanceLogger, config: NodeLeaseConfig = {}, onLost: () => void = () => {}) {
    if (typeof nodeId !== 'string' || nodeId.length === 0 || nodeId.length > 256) throw new RangeError('nodeId must be a non-empty string of at most 256 characters');
    const merged = withDefaults<NodeLeaseConfig>(DEFAULTS, config);
    const renewIntervalMs = merged.renewIntervalMs > 0 ? merged.renewIntervalMs : Math.max(1, Math.floor(merged.leaseMs / 3));
    this.config = { ...merged, renewIntervalMs };
    if (!(Number.isSafeInteger(this.config.leaseMs) && this.config.leaseMs >= 100)) throw new RangeError('leaseMs must be an integer >= 100');
    if (!(Number.isSafeInteger(renewIntervalMs) && renewIntervalMs < this.config.leaseMs)) throw new RangeError('renewIntervalMs must be an integer below leaseMs');
    if (!(Number.isSafeInteger(this.config.batchSize) && this.config.batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
    this.nodeId = nodeId;
    this.#context = context;
    this.#logger = logger;
    this.#onLost = onLost;
  }

  get state(): NodeLeaseState {
    return this.#state;
  }

  /** Settles an earlier incarnation's tasks, registers the lease and starts renewing it. */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    const settled = await this.#failOwnTasks('restarted');
    this.#startedAt = (await registerNode(this.#context, this.nodeId, this.config.leaseMs)).startedAt;
    this.#state = 'held';
    this.testSignals.registered.signal(settled);
    this.#schedule();
  }

  /** Stops renewing and releases the lease (another node's reaper settles what is still live). */
  async stop(): Promise<void> {
    if (this.#state !== 'held') {
      this.#state = 'released';
      return;
    }
    this.#state = 'released';
    clearTimeout(this.#timer);
    await this.#renewing?.catch(() => undefined);
    if (this.#startedAt) {
      await releaseNodeLease(this.#context, this.nodeId, this.#startedAt).catch((error: unknown) =>
        this.#logger.warn(`releasing the lease of node ${this.nodeId} failed; it expires on its own`, error),
      );
    }
  }

  /** One renewal now (also what the timer runs). */
  renewOnce(): Promise<void> {
    this.#renewing ??= this.#renew().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  #schedule(): void {
    if (this.#state !== 'held') return;
    this.#timer = setTimeout(() => {
      this.renewOnce()
        .catch((error: unknown) => this.#logger.warn(`renewing the lease of node ${this.nodeId} failed; retrying`, error))
        .finally(() => this.#schedule());
    }, this.config.renewIntervalMs);
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    if (this.#state !== 'held' || !this.#startedAt) return;
    const expiresAt = await renewNodeLease(this.#context, this.nodeId, this.#startedAt, this.config.leaseMs);
    if (this.#state !== 'held') return;
    if (expiresAt) {
      this.testSignals.renewed.signal(expiresAt);
      return;
    }
    // Lost: expired before this renewal (a pause longer than the lease, the database unreachable)
    // or taken over. Whatever ran here may have been failed by a reaper already; fail the rest the
    // same way, so no run of this node outlives its lease, then start a new lease.
    const failed = await this.#failOwnTasks('lease expired');
    this.#logger.warn(`node ${this.nodeId} lost its lease; failed ${failed} of its live tasks and registered again`);
    this.#startedAt = (await registerNode(this.#context, this.nodeId, this.config.leaseMs)).startedAt;
    this.testSignals.lost.signal(failed);
    this.#onLost();
  }

  async #failOwnTasks(reason: LeaseFailureReason): Promise<number> {
    let total = 0;
    for (;;) {
      const count = await failTasksOfNode(this.#context, this.nodeId, reason, this.config.batchSize);
      total += count;
      if (count < this.config.batchSize) return total;
    }
  }
}
