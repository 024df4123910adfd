import { defaultLogger, ErrorCode, logSafe, type OwedUpstreamCancel, type UpstreamCancelLedger } from '@mcp-tasks/core';
import { metrics, type Counter, type MeterProvider } from '@opentelemetry/api';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';
import type { UpstreamMount } from './upstream-mount.js';

/** Options of {@link UpstreamCancelService}. */
export interface UpstreamCancelServiceConfig {
  /** How often owed cancels are looked for (ms); a cancel owed on this node wakes it at once. Default 1 000. */
  readonly intervalMs?: number;
  /** Owed cancels claimed per round. Default 25. */
  readonly batch?: number;
  /** How long a claimed cancel is this node's to try before any node may take it again (ms). Default 30 000. */
  readonly leaseMs?: number;
  /** Attempts before a cancel is given up (the upstream task's own TTL ends it then). Default 200. */
  readonly maxAttempts?: number;
  /** The first retry's delay after a failure other than a busy upstream (ms), doubled per attempt up to a minute. Default 500. */
  readonly backoffMs?: number;
  readonly meterProvider?: MeterProvider | undefined;
}

/** What one attempt came to, as counted (`mcp_tasks.outcome`). */
type Outcome = 'acknowledged' | 'ended' | 'busy' | 'failed' | 'abandoned';

const MAX_BACKOFF_MS = 60_000;

/**
 * Delivers the cancels the gateway owes its upstreams ({@link UpstreamCancelLedger}): claims
 * the due ones, sends each upstream's in turn, and settles each the upstream acknowledges (or
 * whose task it no longer knows). A busy upstream (429, 503) is left alone for its `Retry-After`
 * before anything more is sent to it; any other failure is retried with backoff. Every node runs
 * one, so a cancel owed by a node that died is delivered by another.
 */
export class UpstreamCancelService {
  readonly #ledger: UpstreamCancelLedger;
  readonly #mounts: ReadonlyMap<string, UpstreamMount>;
  readonly #intervalMs: number;
  readonly #batch: number;
  readonly #leaseMs: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;
  readonly #attempts: Counter;
  /** Upstreams that said they are busy, until when. */
  readonly #busyUntil = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  /** Rounds ended, for tests that wait on the service instead of sleeping. */
  #rounds = 0;

  constructor(ledger: UpstreamCancelLedger, mounts: ReadonlyMap<string, UpstreamMount>, config: UpstreamCancelServiceConfig = {}) {
    this.#ledger = ledger;
    this.#mounts = mounts;
    this.#intervalMs = config.intervalMs ?? 1_000;
    this.#batch = config.batch ?? 25;
    this.#leaseMs = config.leaseMs ?? 30_000;
    this.#maxAttempts = config.maxAttempts ?? 200;
    this.#backoffMs = config.backoffMs ?? 500;
    const meter = (config.meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/server');
    this.#attempts = meter.createCounter('mcp_tasks.proxy.upstream_cancels', { description: 'Attempts of this node to cancel an upstream task its gateway task no longer wants, by upstream and outcome' });
    const owed = meter.createObservableGauge('mcp_tasks.proxy.upstream_cancels.owed', {
      description: 'Upstream cancels owed and not yet acknowledged, by upstream (the whole cluster with a shared store: aggregate with max, not sum)',
    });
    owed.addCallback(async (result) => {
      const counts = await this.#ledger.owed().catch(() => undefined);
      for (const name of this.#mounts.keys()) result.observe(counts?.get(name) ?? 0, { 'mcp_tasks.upstream': name });
    });
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  /** A cancel was owed on this node: a round runs now instead of at the next interval. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#round) this.#again = true;
    else this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
  }

  /** How many rounds have ended (a test's wait). */
  get rounds(): number {
    return this.#rounds;
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#run(), ms);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    if (this.#stopped || this.#round) return;
    let full = false;
    this.#round = this.#once()
      .then((claimed) => void (full = claimed >= this.#batch))
      .catch((error: unknown) => defaultLogger().error({ err: logSafe(error instanceof Error ? error.message : error) }, 'delivering upstream cancels failed, retrying'))
      .finally(() => {
        this.#round = undefined;
        this.#rounds += 1;
      });
    await this.#round;
    if (this.#stopped) return;
    const again = full || this.#again;
    this.#again = false;
    this.#schedule(again ? 0 : this.#intervalMs);
  }

  /** One round: claims the due cancels of the upstreams that are not busy and tries them. How many were claimed. */
  async #once(): Promise<number> {
    const now = Date.now();
    const ready = [...this.#mounts.keys()].filter((name) => (this.#busyUntil.get(name) ?? 0) <= now);
    const claimed = await this.#ledger.claimDue(ready, this.#batch, this.#leaseMs);
    const byUpstream = new Map<string, OwedUpstreamCancel[]>();
    for (const cancel of claimed) byUpstream.set(cancel.upstream, [...(byUpstream.get(cancel.upstream) ?? []), cancel]);
    await Promise.all([...byUpstream].map(([name, cancels]) => this.#deliver(name, cancels)));
    return claimed.length;
  }

  /** One upstream's cancels, one after another: once it says it is busy, the rest wait for its `Retry-After` untried. */
  async #deliver(name: string, cancels: readonly OwedUpstreamCancel[]): Promise<void> {
    const mount = this.#mounts.get(name)!;
    for (const [index, cancel] of cancels.entries()) {
      const busyMs = await this.#attempt(mount, cancel);
      if (busyMs === undefined) continue;
      this.#busyUntil.set(name, Date.now() + busyMs);
      mount.pacer.busy(busyMs);
      await Promise.all(cancels.slice(index + 1).map((rest) => this.#ledger.retryLater(rest.taskId, busyMs, 'not tried: the upstream is busy')));
      return;
    }
  }

  /** Tries one cancel; the upstream's `Retry-After` when it is busy. */
  async #attempt(mount: UpstreamMount, cancel: OwedUpstreamCancel): Promise<number | undefined> {
    try {
      // As the owner upstream that made the task: the caller's own identity when callers are apart there.
      await mount.via(cancel.subject).client.cancelTask(cancel.upstreamTaskId, cancel.session);
      await this.#settled(cancel, 'acknowledged');
      return undefined;
    } catch (error) {
      // The extension answers a task it does not know (expired, gone) with -32602: nothing is left to cancel.
      if (error instanceof UpstreamRpcError && error.code === ErrorCode.InvalidParams) {
        await this.#settled(cancel, 'ended');
        return undefined;
      }
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof UpstreamError && error.busy) {
        this.#count(cancel, 'busy');
        await this.#ledger.retryLater(cancel.taskId, error.retryAfterMs!, message);
        return error.retryAfterMs;
      }
      if (cancel.attempts >= this.#maxAttempts) {
        defaultLogger().error({ upstream: mount.name, upstreamTaskId: cancel.upstreamTaskId, taskId: cancel.taskId, attempts: cancel.attempts, err: logSafe(message) }, 'an upstream cancel was given up');
        await this.#settled(cancel, 'abandoned');
        return undefined;
      }
      this.#count(cancel, 'failed');
      await this.#ledger.retryLater(cancel.taskId, this.#backoff(cancel.attempts), message);
      return undefined;
    }
  }

  async #settled(cancel: OwedUpstreamCancel, outcome: 'acknowledged' | 'ended' | 'abandoned'): Promise<void> {
    this.#count(cancel, outcome);
    await this.#ledger.settle(cancel.taskId, outcome);
  }

  #count(cancel: OwedUpstreamCancel, outcome: Outcome): void {
    this.#attempts.add(1, { 'mcp_tasks.upstream': cancel.upstream, 'mcp_tasks.outcome': outcome });
  }

  /** Exponential, with jitter so that the cancels of one burst do not come back together. */
  #backoff(attempts: number): number {
    const ms = Math.min(MAX_BACKOFF_MS, this.#backoffMs * 2 ** Math.min(20, attempts - 1));
    return Math.round(ms / 2 + (Math.random() * ms) / 2);
  }
}
