import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { MaintenanceLogger } from '../maintenance/maintenance-logger.js';
import { TestSignal } from '../maintenance/test-signal.js';
import { withDefaults } from '../maintenance/with-defaults.js';
import { parseControlMessage, type ControlMessage } from './control-channel.js';

/** Configuration of {@link ControlListener}; every field but the connection has a default. */
export interface ControlListenerConfig {
  /** How often the connection proves it still listens (`pg_listening_channels()`), ms. Default 10 000. */
  readonly livenessIntervalMs?: number;
  /** How long a liveness check may take before the connection is declared dead, ms. Default 5 000. */
  readonly livenessTimeoutMs?: number;
  /** First reconnect delay, ms; doubles per failed attempt. Default 100. */
  readonly reconnectBaseMs?: number;
  /** Cap of the reconnect delay, ms. Default 10 000. */
  readonly reconnectMaxMs?: number;
  /** How long the start-up self-test NOTIFY may take to come back, ms. Default 2 000. */
  readonly selfTestTimeoutMs?: number;
  /** TCP keepalive initial delay of the listening socket, ms. Default 10 000. */
  readonly keepAliveInitialDelayMs?: number;
}

/** Where the listener stands. */
export type ControlListenerState = 'idle' | 'connecting' | 'listening' | 'reconnecting' | 'polling-only' | 'stopped';

/** What the listener needs from its owner. */
export interface ControlListenerHooks {
  /** A control message arrived. */
  readonly onMessage: (message: ControlMessage) => void;
  /**
   * The connection listens, first or again: notifications sent before (while it was connecting,
   * or while it was down) were not received, so the owner rescans what it watches.
   */
  readonly onListening: () => void;
  /** Sends the self-test NOTIFY through the pool (not the listening connection), as real writers do. */
  readonly notify: (channel: string, payload: string) => Promise<void>;
  readonly logger: MaintenanceLogger;
}

const DEFAULTS: Required<ControlListenerConfig> = {
  livenessIntervalMs: 10_000,
  livenessTimeoutMs: 5_000,
  reconnectBaseMs: 100,
  reconnectMaxMs: 10_000,
  selfTestTimeoutMs: 2_000,
  keepAliveInitialDelayMs: 10_000,
};

/**
 * One LISTEN connection, outside the pool, that carries control messages to this node. It is
 * built for the ways LISTEN fails silently: a half-open socket (TCP keepalive plus a periodic
 * `pg_listening_channels()` check that reconnects when the channel is gone or the check hangs),
 * a dropped backend (reconnect with capped exponential backoff, then `onListening` so the owner
 * rescans what it may have missed), and a transaction-mode pooler that swallows LISTEN (a
 * self-test NOTIFY at first connect; when it does not come back the listener warns once and
 * stays off, leaving delivery to the runtime's poll).
 */
export class ControlListener {
  readonly config: Required<ControlListenerConfig>;
  /** Test signals, so tests await events instead of sleeping. */
  readonly testSignals = {
    listening: new TestSignal(),
    reconnected: new TestSignal(),
    connectionLost: new TestSignal<unknown>(),
    livenessChecked: new TestSignal<boolean>(),
    selfTestFailed: new TestSignal(),
    message: new TestSignal<ControlMessage>(),
  };
  readonly #clientConfig: pg.ClientConfig;
  /** The broadcast channel first (the self-test's name comes from it), then this node's own wake channel. */
  readonly #channels: readonly string[];
  readonly #hooks: ControlListenerHooks;
  #state: ControlListenerState = 'idle';
  #client: pg.Client | undefined;
  #attempt = 0;
  #everListened = false;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #provenClient: pg.Client | undefined;
  #livenessTimer: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | undefined;

  /** `channels`: one name, or the broadcast channel and then the node's own wake channel. */
  constructor(clientConfig: pg.ClientConfig, channels: string | readonly string[], hooks: ControlListenerHooks, config: ControlListenerConfig = {}) {
    this.config = withDefaults(DEFAULTS, config);
    for (const [name, value] of Object.entries(this.config)) {
      if (!(Number.isSafeInteger(value) && value > 0)) throw new RangeError(`${name} must be a positive integer`);
    }
    if (this.config.reconnectMaxMs < this.config.reconnectBaseMs) throw new RangeError('reconnectMaxMs must be at least reconnectBaseMs');
    this.#clientConfig = clientConfig;
    this.#channels = typeof channels === 'string' ? [channels] : [...channels];
    if (this.#channels.length === 0) throw new RangeError('the listener needs a channel');
    this.#hooks = hooks;
  }

  get state(): ControlListenerState {
    return this.#state;
  }

  /** Connects in the background; idempotent. Failures are retried, never thrown. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'connecting';
    this.#connect();
  }

  /**
   * Whether delivery has proved itself on the current connection: it listens, and the self-test
   * NOTIFY or a liveness check passed on it since it connected. A reconnected connection proves
   * itself at its first liveness check.
   */
  get proven(): boolean {
    return this.#state === 'listening' && this.#client !== undefined && this.#provenClient === this.#client;
  }

  /** Closes the connection and every timer. */
  async stop(): Promise<void> {
    this.#state = 'stopped';
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#livenessTimer);
    await this.#connecting?.catch(() => undefined);
    await this.#dropClient();
  }

  #connect(): void {
    this.#connecting = this.#open()
      .catch((error: unknown) => this.#lost(error))
      .finally(() => (this.#connecting = undefined));
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ ...this.#clientConfig, keepAlive: true, keepAliveInitialDelayMillis: this.config.keepAliveInitialDelayMs });
    this.#client = client;
    client.on('error', (error) => {
      if (this.#client === client) void this.#lost(error);
    });
    client.on('end', () => {
      if (this.#client === client) void this.#lost(new Error('listener connection ended'));
    });
    client.on('notification', (notification) => {
      if (!this.#channels.includes(notification.channel)) return;
      const message = parseControlMessage(notification.payload);
      if (!message) return;
      this.testSignals.message.signal(message);
      this.#hooks.onMessage(message);
    });
    await client.connect();
    if (this.#stoppedOrReplaced(client)) return;
    for (const channel of this.#channels) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    if (!this.#everListened && !(await this.#selfTest(client))) return;
    if (this.#stoppedOrReplaced(client)) return;
    const reconnected = this.#everListened;
    this.#everListened = true;
    this.#attempt = 0;
    this.#state = 'listening';
    clearInterval(this.#livenessTimer);
    this.#livenessTimer = setInterval(() => void this.#checkLiveness(client), this.config.livenessIntervalMs);
    this.#livenessTimer.unref();
    this.testSignals.listening.signal();
    if (reconnected) this.testSignals.reconnected.signal();
    this.#hooks.onListening();
  }

  /** Whether a NOTIFY sent through the pool reaches this connection (it does not behind a transaction pooler). */
  async #selfTest(client: pg.Client): Promise<boolean> {
    const channel = `${this.#channels[0]!}_selftest_${randomBytes(6).toString('hex')}`;
    const payload = randomBytes(6).toString('hex');
    await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), this.config.selfTestTimeoutMs);
      const onNotification = (notification: pg.Notification): void => {
        if (notification.channel === channel && notification.payload === payload) finish(true);
      };
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        client.off('notification', onNotification);
        resolve(ok);
      };
      client.on('notification', onNotification);
    });
    await this.#hooks.notify(channel, payload);
    const ok = await arrived;
    if (ok) this.#provenClient = client;
    await client.query(`UNLISTEN ${client.escapeIdentifier(channel)}`);
    if (!ok) {
      this.#hooks.logger.warn(
        `LISTEN/NOTIFY self-test failed: a notification on ${channel} did not arrive within ${this.config.selfTestTimeoutMs} ms ` +
          '(a transaction-mode pooler?). Cancels and answers will reach running tasks through polling only: ' +
          'give the node a direct connection string for LISTEN, the lease and the locks (directConnectionString; DIRECT_DATABASE_URL in the demo).',
      );
      this.#state = 'polling-only';
      this.testSignals.selfTestFailed.signal();
      await this.#dropClient();
    }
    return ok;
  }

  async #checkLiveness(client: pg.Client): Promise<void> {
    if (this.#client !== client || this.#state !== 'listening') return;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`liveness check timed out after ${this.config.livenessTimeoutMs} ms`)), this.config.livenessTimeoutMs);
      });
      const { rows } = await Promise.race([client.query<{ channel: string }>('SELECT pg_listening_channels() AS channel'), timeout]);
      const heard = new Set(rows.map((row) => row.channel));
      if (!this.#channels.every((channel) => heard.has(channel))) throw new Error('the listener connection no longer listens on its channels');
      this.#provenClient = client;
      this.testSignals.livenessChecked.signal(true);
    } catch (error) {
      this.testSignals.livenessChecked.signal(false);
      if (this.#client === client) await this.#lost(error);
    } finally {
      clearTimeout(timer);
    }
  }

  async #lost(error: unknown): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'polling-only' || this.#state === 'reconnecting') return;
    this.#state = 'reconnecting';
    clearInterval(this.#livenessTimer);
    this.testSignals.connectionLost.signal(error);
    if (this.#attempt === 0) this.#hooks.logger.warn(`control listener connection lost (${error instanceof Error ? error.message : String(error)}); reconnecting`);
    await this.#dropClient();
    const delay = Math.min(this.config.reconnectMaxMs, this.config.reconnectBaseMs * 2 ** this.#attempt);
    this.#attempt += 1;
    // Jitter, so the nodes of a cluster do not reconnect in lockstep after a database restart.
    const jittered = Math.round(delay * (0.5 + Math.random() / 2));
    this.#reconnectTimer = setTimeout(() => {
      if (this.#state !== 'reconnecting') return;
      this.#state = 'connecting';
      this.#connect();
    }, jittered);
    this.#reconnectTimer.unref();
  }

  #stoppedOrReplaced(client: pg.Client): boolean {
    return this.#state === 'stopped' || this.#client !== client;
  }

  async #dropClient(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    client.removeAllListeners('notification');
    // end() can hang on a half-open socket; the socket is destroyed as a fallback.
    const ended = await Promise.race([
      client.end().then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000).unref()),
    ]);
    if (!ended) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }
}
