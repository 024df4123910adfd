import type { FollowedTask, RunRegistry, TaskNode, TaskOwner, TaskRef, TaskSignal, Unsubscribe } from '@mcp-tasks/core';
import { isTerminal, TaskFanOut } from '@mcp-tasks/core';
import { wakeChannelOf, type ControlMessage } from '../listener/control-channel.js';
import { ControlListener, type ControlListenerConfig } from '../listener/control-listener.js';
import { listenerConnectionConfig } from '../listener/listener-connection.js';
import { ClusterStatsService, type ClusterStatsConfig } from '../maintenance/cluster-stats-service.js';
import { LeaseReaper, type LeaseReaperConfig } from '../maintenance/lease-reaper.js';
import { consoleLogger, type MaintenanceLogger } from '../maintenance/maintenance-logger.js';
import { NodeLease, type NodeLeaseConfig } from '../maintenance/node-lease.js';
import { newNodeIdentity, type NodeIdentity } from './node-identity.js';
import { OrphanRescuer, type OrphanRescuerConfig } from '../maintenance/orphan-rescuer.js';
import { TaskPartitioner, type TaskPartitionerConfig } from '../maintenance/task-partitioner.js';
import { enableTestSignals } from '../maintenance/test-signal.js';
import { TtlSweeper, type TtlSweeperConfig } from '../maintenance/ttl-sweeper.js';
import { connectionOf, type PostgresTaskStore, type StoreConnection } from '../postgres-task-store.js';
import { readWatchedStates } from '../sql/read-watched-states.js';
import { explainConnectionError } from '../connection/connection-error.js';
import { MaintenanceConnection } from './maintenance-connection.js';
import { sessionConnections, type SessionConnections } from './session-connections.js';

/**
 * Options of {@link PostgresTaskNode.start}. Each service takes its settings, or `false` to switch
 * it off on this node; every one is on by default.
 */
export interface PostgresTaskNodeOptions {
  /**
   * This node's name (`NODE_ID`): what operators call it, kept by its successors. The process's
   * id, recorded on its lease and on the tasks it runs, is this name, `/` and a random instance id
   * ({@link PostgresTaskNode.identity}), so two processes with one name never share a lease.
   * Default: `node`.
   */
  readonly nodeId?: string;
  /**
   * A connection string straight to PostgreSQL (`DIRECT_DATABASE_URL`), for what needs a session
   * of its own: the LISTEN connection, the lease connection (and its `pg_stat_activity` look-up
   * of namesakes) and the maintenance leader's. Give it when the store's pool goes through a
   * transaction-mode pooler. Default: the store's (`PostgresTaskStore`'s `directConnectionString`,
   * else its pool's settings).
   */
  readonly directConnectionString?: string;
  /** The LISTEN connection that carries cancels, answers and followed changes to this node. */
  readonly listener?: ControlListenerConfig | false;
  /** The node's lease: while it is held, the node's live tasks are its own. */
  readonly lease?: NodeLeaseConfig | false;
  /** Fails the tasks of nodes whose lease expired. Interval default: a third of `lease.leaseMs`. */
  readonly reaper?: LeaseReaperConfig | false;
  /** Deletes expired tasks (they read as absent before). */
  readonly sweeper?: TtlSweeperConfig | false;
  /** Makes the task table's hourly partitions ahead (one node at a time); the sweeper drops them. */
  readonly partitions?: TaskPartitionerConfig | false;
  /** Fails this node's live tasks that no run of its runtime holds (an outcome that could not be written). */
  readonly rescuer?: OrphanRescuerConfig | false;
  /** Counts the cluster's tasks (one node at a time) for cluster-wide gauges and the console. */
  readonly stats?: ClusterStatsConfig | false;
  /** Where background problems are reported. Default: the console. */
  readonly logger?: MaintenanceLogger;
  /** Keep every service's test signals from the start (tests only; off, they cost nothing). */
  readonly testSignals?: boolean;
}

/**
 * One node of a cluster on a {@link PostgresTaskStore}: it owns the cluster services beside the
 * store (the LISTEN connection, the node lease, the lease reaper, the TTL sweeper) and fans the
 * events they bring out to this process's runs and followers. Give it to the runtime as `node`.
 */
export class PostgresTaskNode implements TaskNode {
  /** This process's id: `<name>/<instance id>`. */
  readonly nodeId: string;
  readonly identity: NodeIdentity;
  /** The LISTEN connection (connects on the first watch or follow); `undefined` when switched off. */
  readonly listener: ControlListener | undefined;
  readonly lease: NodeLease | undefined;
  readonly reaper: LeaseReaper | undefined;
  readonly sweeper: TtlSweeper | undefined;
  readonly partitioner: TaskPartitioner | undefined;
  readonly rescuer: OrphanRescuer | undefined;
  readonly stats: ClusterStatsService | undefined;
  /** Where the session connections go (direct, or the store's settings). */
  readonly sessions: SessionConnections;
  readonly #connection: StoreConnection;
  readonly #maintenance: MaintenanceConnection | undefined;
  #poolerFound = false;
  readonly #store: PostgresTaskStore;
  readonly #logger: MaintenanceLogger;
  readonly #fanOut: TaskFanOut;
  readonly #claimers = new Set<() => void>();
  #wakeups = { received: 0, ignored: 0 };
  #stopped: Promise<void> | undefined;

  /** Starts a node beside `store`: registers its lease and starts its timers. */
  static async start(store: PostgresTaskStore, options: PostgresTaskNodeOptions = {}): Promise<PostgresTaskNode> {
    const node = new PostgresTaskNode(store, options);
    try {
      await node.lease?.start();
    } catch (error) {
      await node.stop();
      throw explainConnectionError(error, node.sessions.direct ? 'the direct connection string' : 'the connection string');
    }
    node.reaper?.start();
    node.sweeper?.start();
    node.partitioner?.start();
    // A first round now: the partitions of the next hours exist from the cluster's first start.
    node.partitioner?.runOnce().catch((error: unknown) => node.#logger.error('task partitions failed', error));
    node.rescuer?.start();
    node.stats?.start();
    // A first round now, so the counts are there from the start rather than after an interval.
    node.stats?.runOnce().catch((error: unknown) => node.#logger.error('cluster stats failed', error));
    return node;
  }

  /** Prefer {@link PostgresTaskNode.start}: the constructor validates and builds, and starts nothing. */
  constructor(store: PostgresTaskStore, options: PostgresTaskNodeOptions = {}) {
    this.#store = store;
    this.#connection = connectionOf(store);
    this.#logger = options.logger ?? consoleLogger;
    this.#fanOut = new TaskFanOut((error, taskId) => this.#logger.error(`a listener of task ${taskId} threw`, error));
    this.identity = newNodeIdentity(options.nodeId ?? 'node');
    this.nodeId = this.identity.nodeId;
    const { sql, schema, pool } = this.#connection;
    // Cancels and answers of this node's tasks come on a channel of its own (wake-runner.ts);
    // without a listener it records none, so senders keep to the broadcast for it.
    const wakeChannel = options.listener === false ? undefined : wakeChannelOf(schema, this.identity.instanceId);
    this.sessions = sessionConnections(pool, options.directConnectionString ?? this.#connection.directConnectionString);
    this.lease =
      options.lease === false
        ? undefined
        : new NodeLease(this.sessions, sql, this.identity, this.#logger, options.lease, {
            onLost: () => this.#abandonRuns(),
            sessionsVisible: () => !this.behindPooler,
            listening: () => this.#listening(),
            onPooler: () => (this.#poolerFound = true),
            wakeChannel,
          });
    const leaseMs = this.lease?.config.leaseMs;
    const maintenanceServices = options.reaper !== false || options.sweeper !== false || options.partitions !== false || options.rescuer !== false || options.stats !== false;
    // The leader's rounds (transactions holding a transaction-scoped advisory lock) work through a
    // transaction pooler too; given a direct connection they take it, off the pooler's slots.
    this.#maintenance = this.sessions.direct && maintenanceServices ? new MaintenanceConnection(this.sessions, sql, this.identity.instanceId, this.#logger) : undefined;
    const leader = this.#maintenance?.context ?? sql;
    this.reaper =
      options.reaper === false
        ? undefined
        : new LeaseReaper(leader, schema, this.#logger, { intervalMs: leaseMs === undefined ? undefined : Math.max(1, Math.floor(leaseMs / 3)), ...options.reaper });
    this.sweeper = options.sweeper === false ? undefined : new TtlSweeper(leader, schema, this.#logger, options.sweeper);
    this.partitioner = options.partitions === false ? undefined : new TaskPartitioner(leader, schema, this.#logger, options.partitions);
    this.rescuer = options.rescuer === false ? undefined : new OrphanRescuer(leader, schema, this.nodeId, this.#logger, options.rescuer);
    this.stats = options.stats === false ? undefined : new ClusterStatsService(leader, schema, this.nodeId, this.#logger, options.stats);
    this.listener =
      options.listener === false
        ? undefined
        : new ControlListener(
            listenerConnectionConfig(this.sessions, this.identity.instanceId),
            wakeChannel ? [sql.channel, wakeChannel] : sql.channel,
            {
              onMessage: (message) => this.#deliver(message),
              onListening: () => void this.#rescan(),
              notify: async (channel, payload) => {
                await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
              },
              logger: this.#logger,
            },
            options.listener,
          );
    if (options.testSignals) {
      for (const service of [this.listener, this.lease, this.reaper, this.sweeper, this.partitioner, this.rescuer, this.stats]) if (service) enableTestSignals(service.testSignals);
    }
  }

  /**
   * Whether the node found a pooler on its session connections' way (without a direct connection
   * string): the lease connection was refused a startup parameter, or LISTEN's self-test failed.
   * Namesakes are then left to their leases, since their connections cannot be seen by name.
   */
  get behindPooler(): boolean {
    return !this.sessions.direct && (this.#poolerFound || this.listener?.state === 'polling-only');
  }

  #listening(): boolean | null {
    const state = this.listener?.state;
    if (state === undefined || state === 'polling-only' || state === 'reconnecting') return false;
    return state === 'listening' ? true : null;
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe {
    const unwatch = this.#fanOut.watch(taskId, listener);
    if (!this.#stopped) this.listener?.start();
    return unwatch;
  }

  async follow(ref: TaskRef, listener: () => void): Promise<Unsubscribe | undefined> {
    if (!(await this.#store.markFollowed(ref))) return undefined;
    const unfollow = this.#fanOut.follow(ref.taskId, listener);
    // Changes made before the connection listens are covered by its rescan, which pings followers.
    if (!this.#stopped) this.listener?.start();
    return unfollow;
  }

  signalsProven(): boolean {
    return this.listener?.proven ?? false;
  }

  onClaimable(listener: () => void): Unsubscribe {
    this.#claimers.add(listener);
    if (!this.#stopped) this.listener?.start();
    return () => void this.#claimers.delete(listener);
  }

  attachRuns(runs: RunRegistry): Unsubscribe {
    return this.rescuer?.attach(runs) ?? (() => {});
  }

  followMany(owner: TaskOwner, taskIds: readonly string[], listener: (taskId: string) => void): Promise<FollowedTask[]> {
    const followed = this.#fanOut.followMany(taskIds, listener, () => this.#store.markFollowedMany(owner, taskIds));
    if (!this.#stopped) this.listener?.start();
    return followed;
  }

  /** How many tasks this node follows now (0 when no follower is left); for tests and metrics. */
  get followedTaskCount(): number {
    return this.#fanOut.followedTaskIds().length;
  }

  /**
   * Stops the services. Call it after the runtime settled its runs and before the store closes:
   * the lease goes last, so another node's reaper fails only what is still live then.
   */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#fanOut.clear();
      this.#claimers.clear();
      await Promise.allSettled([this.sweeper?.stop(), this.partitioner?.stop(), this.reaper?.stop(), this.rescuer?.stop(), this.stats?.stop(), this.listener?.stop()]);
      await this.#maintenance?.close().catch(() => undefined);
      await this.lease?.stop();
    })();
    return this.#stopped;
  }

  /**
   * Control messages this node's listener received, and of those the ones about a task nobody
   * here watches or follows (`claimable` ones are never ignored: they wake the claimers). With
   * wake channels a cancel reaches one node; before them, every node received it and ignored it.
   */
  get wakeups(): { readonly received: number; readonly ignored: number } {
    return { ...this.#wakeups };
  }

  #deliver(message: ControlMessage): void {
    this.#wakeups.received += 1;
    if (message.op !== 'claimable' && !this.#fanOut.concerns(message.taskId)) this.#wakeups.ignored += 1;
    if (message.op === 'claimable') this.#wakeClaimers();
    if (message.op === 'cancel' || message.op === 'input') this.#fanOut.signal(message.taskId, message.op === 'cancel' ? { kind: 'cancelled' } : { kind: 'input' });
    this.#fanOut.changed(message.taskId);
  }

  #wakeClaimers(): void {
    for (const claimer of this.#claimers) {
      try {
        claimer();
      } catch (error) {
        this.#logger.error('a claimer threw', error);
      }
    }
  }

  /**
   * The lease is lost: the cluster may already have failed this node's tasks (and the lease
   * failed the rest), so every run here stops now, without a read that could queue behind
   * request traffic. Followers re-read to send the failed state.
   */
  #abandonRuns(): void {
    for (const taskId of this.#fanOut.watchedTaskIds()) this.#fanOut.signal(taskId, { kind: 'cancelled', confirmed: true });
    for (const taskId of this.#fanOut.followedTaskIds()) this.#fanOut.changed(taskId);
  }

  /**
   * Once the connection listens (first, or after a reconnect), notifications sent before are lost: re-read every watched task and signal what changed
   * (ended: cancelled; otherwise a wake so waiters re-read), and ping every follower.
   */
  async #rescan(): Promise<void> {
    // Claimable announcements sent while the connection was down are lost too.
    this.#wakeClaimers();
    for (const taskId of this.#fanOut.followedTaskIds()) this.#fanOut.changed(taskId);
    const taskIds = this.#fanOut.watchedTaskIds();
    if (taskIds.length === 0) return;
    try {
      const states = await readWatchedStates(this.#connection.sql, taskIds);
      for (const taskId of taskIds) {
        const status = states.get(taskId);
        this.#fanOut.signal(taskId, status === undefined || isTerminal(status) ? { kind: 'cancelled', confirmed: true } : { kind: 'input' });
      }
    } catch (error) {
      this.#logger.warn('rescan after listener reconnect failed; waking every watcher', error);
      for (const taskId of taskIds) this.#fanOut.signal(taskId, { kind: 'input' });
    }
  }
}
