import { LISTENER_APPLICATION_NAME } from '../listener/listener-connection.js';
import type { NodeIdentity } from '../node/node-identity.js';
import { expireGoneNamesakes } from '../sql/expire-gone-namesakes.js';
import { failTasksOfNode } from '../sql/fail-tasks-of-node.js';
import type { LeaseFailureReason } from '../sql/lease-error.js';
import { registerNode } from '../sql/register-node.js';
import { releaseNodeLease } from '../sql/release-node-lease.js';
import { renewNodeLease } from '../sql/renew-node-lease.js';
import type { SessionConnections } from '../node/session-connections.js';
import type { SqlContext } from '../sql/sql-context.js';
import { LEASE_APPLICATION_NAME, LeaseConnection } from './lease-connection.js';
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
  /**
   * Longest a statement on the lease connection may take (ms), so a renewal that hangs fails in
   * time for the next one. Default 80 % of `renewIntervalMs`; must be below it.
   */
  readonly statementTimeoutMs?: number;
}

/** Where a lease stands. */
export type NodeLeaseState = 'idle' | 'held' | 'released';

const DEFAULTS = { leaseMs: 30_000, renewIntervalMs: 0, batchSize: 1_000, statementTimeoutMs: 0 } as const;

/** What the lease asks of the node it belongs to; every hook has a default. */
export interface NodeLeaseHooks {
  /** The lease is lost: stop every run here at once. */
  readonly onLost?: () => void;
  /**
   * Whether `pg_stat_activity` shows this cluster's session connections by their names: false
   * behind a pooler (names follow whichever client a backend serves), where a namesake's
   * connections cannot be told gone, so its tasks wait for its lease. Default: always.
   */
  readonly sessionsVisible?: () => boolean;
  /** Whether this node's LISTEN works now (null: not known yet), recorded on each renewal for operators. */
  readonly listening?: () => boolean | null;
  /** The lease connection found a pooler in between (it refused a startup parameter). */
  readonly onPooler?: () => void;
  /**
   * The channel this node's listener hears its own wake-ups on, recorded on its lease row so that
   * cancels and answers of its tasks wake it alone (wake-runner.ts). Default: none (the broadcast).
   */
  readonly wakeChannel?: string;
}

/** Connecting may take longer than a statement (a TLS handshake), but never as long as a lease. */
const MIN_CONNECT_TIMEOUT_MS = 2_000;

/**
 * This node's lease row in `<schema>.nodes`: registered at start, renewed every `leaseMs / 3`,
 * released on stop, on a connection of its own ({@link LeaseConnection}) so that request traffic
 * on the store's pool never delays a renewal. While it is held, the node's live tasks are its
 * own; once it expires (a crash, a partition, a long pause) any node's {@link LeaseReaper} fails
 * them.
 *
 * The lease is this process's alone: its id is the configured name plus an instance id
 * ({@link NodeIdentity}), so a second process given the same name holds a lease of its own. Registering
 * settles at once what a namesake that is known to be gone left live ("node X restarted"): one
 * whose lease and LISTEN connections are all closed (a crash closes them with the process). A
 * namesake still connected (a predecessor draining) keeps its tasks; they wait for its lease like
 * any node's. A start never refuses a name that looks taken: after a SIGKILL the old lease
 * still looks held until it runs out. A renewal is compare-and-set
 * on "not expired and still mine"; when it fails the lease is lost, and the node does what the
 * reaper does, for its own tasks: fails every live task it holds ("node X lease expired"), which
 * then tells the node (`onLost`) to stop every run here at once, and registers afresh. A node that
 * cannot reach the database for a whole lease tells the node the same way.
 * Writes of those runs then lose their compare-and-set instead of reviving a failed task.
 */
export class NodeLease {
  readonly nodeId: string;
  readonly identity: NodeIdentity;
  readonly config: Required<NodeLeaseConfig>;
  /**
   * Test signals: each renewal (the new expiry), each lost lease, each registration (the tasks of
   * gone namesakes it settled), each renewal that settled tasks of gone namesakes (how many).
   */
  readonly testSignals = {
    renewed: new TestSignal<Date>(),
    lost: new TestSignal<number>(),
    registered: new TestSignal<number>(),
    namesakesSettled: new TestSignal<number>(),
  };
  readonly #connection: LeaseConnection;
  readonly #context: SqlContext;
  readonly #logger: MaintenanceLogger;
  readonly #onLost: () => void;
  #renewedAt: Date | undefined;
  #losses = 0;
  readonly #sessionsVisible: () => boolean;
  readonly #listening: () => boolean | null;
  readonly #wakeChannel: string | null;
  #startedAt: Date | undefined;
  #state: NodeLeaseState = 'idle';
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #settling: Promise<void> | undefined;
  /** The `performance.now()` until which the lease surely holds: when its last good renewal was sent, plus `leaseMs`. */
  #validUntil = 0;
  #abandoned = false;

  /** `session` says where the lease's own connection goes: a direct URL, or the store's settings. */
  constructor(session: SessionConnections, context: SqlContext, identity: NodeIdentity, logger: MaintenanceLogger, config: NodeLeaseConfig = {}, hooks: NodeLeaseHooks = {}) {
    const merged = withDefaults<NodeLeaseConfig>(DEFAULTS, config);
    const renewIntervalMs = merged.renewIntervalMs > 0 ? merged.renewIntervalMs : Math.max(1, Math.floor(merged.leaseMs / 3));
    const statementTimeoutMs = merged.statementTimeoutMs > 0 ? merged.statementTimeoutMs : Math.max(1, Math.floor(renewIntervalMs * 0.8));
    this.config = { ...merged, renewIntervalMs, statementTimeoutMs };
    if (!(Number.isSafeInteger(this.config.leaseMs) && this.config.leaseMs >= 100)) throw new RangeError('leaseMs must be an integer >= 100');
    if (!(Number.isSafeInteger(renewIntervalMs) && renewIntervalMs < this.config.leaseMs)) throw new RangeError('renewIntervalMs must be an integer below leaseMs');
    if (!(Number.isSafeInteger(this.config.batchSize) && this.config.batchSize > 0)) throw new RangeError('batchSize must be a positive integer');
    if (!(Number.isSafeInteger(statementTimeoutMs) && statementTimeoutMs < renewIntervalMs)) throw new RangeError('statementTimeoutMs must be an integer below renewIntervalMs');
    this.identity = identity;
    this.nodeId = identity.nodeId;
    this.#connection = new LeaseConnection(
      session,
      context,
      identity.instanceId,
      { statementTimeoutMs, connectTimeoutMs: Math.max(MIN_CONNECT_TIMEOUT_MS, statementTimeoutMs) },
      logger,
      hooks.onPooler,
    );
    this.#context = this.#connection.context;
    this.#logger = logger;
    this.#onLost = hooks.onLost ?? (() => {});
    this.#sessionsVisible = hooks.sessionsVisible ?? (() => true);
    this.#listening = hooks.listening ?? (() => null);
    this.#wakeChannel = hooks.wakeChannel ?? null;
  }

  get state(): NodeLeaseState {
    return this.#state;
  }

  /** When the lease was last registered or renewed (the node's gauge of its lease age). */
  get renewedAt(): Date | undefined {
    return this.#renewedAt;
  }

  /** Leases this node lost since it started (each one failed its live tasks). */
  get losses(): number {
    return this.#losses;
  }

  /** Registers the lease, settles what gone namesakes left live, and starts renewing. */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    await this.#register();
    this.#state = 'held';
    this.#schedule();
    const settling = this.#settleGoneNamesakes();
    this.#settling = settling.then(() => undefined).finally(() => (this.#settling = undefined));
    this.testSignals.registered.signal(await settling);
  }

  /** Stops renewing and releases the lease (another node's reaper settles what is still live). */
  async stop(): Promise<void> {
    const held = this.#state === 'held';
    this.#state = 'released';
    clearTimeout(this.#timer);
    await this.#renewing?.catch(() => undefined);
    await this.#settling;
    if (held && this.#startedAt) {
      await releaseNodeLease(this.#context, this.nodeId, this.#startedAt).catch((error: unknown) =>
        this.#logger.warn(`releasing the lease of node ${this.nodeId} failed; it expires on its own`, error),
      );
    }
    await this.#connection.close().catch(() => undefined);
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
    const sentAt = performance.now();
    let expiresAt: Date | undefined;
    try {
      expiresAt = await renewNodeLease(this.#context, this.nodeId, this.#startedAt, this.config.leaseMs, this.#listening());
    } catch (error) {
      // Unreachable for a whole lease: the cluster counts this node dead and may fail its tasks,
      // so its runs stop now rather than when the database answers again.
      if (this.#state === 'held' && performance.now() >= this.#validUntil) this.#abandonRuns();
      throw error;
    }
    if (this.#state !== 'held') return;
    if (expiresAt) {
      this.#validUntil = sentAt + this.config.leaseMs;
      this.#abandoned = false;
      this.#renewedAt = new Date();
      this.testSignals.renewed.signal(expiresAt);
      // A namesake killed just before this process started may have had a connection still open
      // then (the database notices a closed socket a moment later): look again, rather than leave
      // its tasks to its lease. Beside the renewals, not before the next one: the connection is
      // a pool of one, so a renewal waits for one statement at most.
      this.#settling ??= this.#settleGoneNamesakes()
        .then((settled) => {
          if (settled > 0) this.testSignals.namesakesSettled.signal(settled);
        })
        .finally(() => (this.#settling = undefined));
      return;
    }
    // Lost: expired before this renewal (a pause longer than the lease, the database unreachable)
    // or taken over. Whatever ran here may have been failed by a reaper already; fail the rest the
    // same way, and stop every run here at once, so no run of this node outlives its lease; then
    // start a new lease.
    let failed: number;
    try {
      failed = await this.#failTasksOf(this.nodeId, 'lease expired');
    } finally {
      this.#abandonRuns();
    }
    this.#losses += 1;
    this.#logger.warn(`node ${this.nodeId} lost its lease; failed ${failed} of its live tasks and registered again`);
    await this.#register();
    this.testSignals.lost.signal(failed);
  }

  async #register(): Promise<void> {
    const sentAt = performance.now();
    this.#startedAt = (await registerNode(this.#context, this.identity, this.config.leaseMs, this.#wakeChannel)).startedAt;
    this.#renewedAt = new Date();
    this.#validUntil = sentAt + this.config.leaseMs;
    this.#abandoned = false;
  }

  /**
   * What gone namesakes left live is failed now; should that fail, their leases run out and a
   * reaper settles them then, so the start goes on.
   */
  async #settleGoneNamesakes(): Promise<number> {
    let settled = 0;
    // Through a pooler (no direct connection) a namesake's connections cannot be seen by name.
    if (this.#connection.startupRefused || !this.#sessionsVisible()) return settled;
    try {
      for (const nodeId of await expireGoneNamesakes(this.#context, this.identity, [LEASE_APPLICATION_NAME, LISTENER_APPLICATION_NAME])) {
        settled += await this.#failTasksOf(nodeId, 'restarted');
      }
    } catch (error) {
      this.#logger.warn(`node ${this.nodeId} could not settle the tasks of gone processes named ${this.identity.name}; their leases run out instead`, error);
    }
    return settled;
  }

  /** Tells the node once per loss, so it stops its runs. */
  #abandonRuns(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    this.#onLost();
  }

  async #failTasksOf(nodeId: string, reason: LeaseFailureReason): Promise<number> {
    let total = 0;
    for (;;) {
      const count = await failTasksOfNode(this.#context, nodeId, reason, this.config.batchSize);
      total += count;
      if (count < this.config.batchSize) return total;
    }
  }
}
