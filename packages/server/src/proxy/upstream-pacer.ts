import { abortableSleep as sleep } from './abortable-sleep.js';

/** What the relays of one node may send one upstream, from its rate. */
export interface UpstreamRateOptions {
  /** Requests a second the upstream allows the gateway's credential. */
  readonly requestsPerSecond: number;
  /** The share of it one node's relays (their `tasks/get` polls) may use: the rest is left to calls and cancels. Default 0.5. */
  readonly relayShare?: number;
}

/**
 * Paces the relays of one node towards one upstream: their polls are spaced evenly at the
 * relays' share of the upstream's rate (so a hundred relays that woke together do not arrive
 * together), and all of them stand back for as long as the upstream last asked (`Retry-After`).
 */
export class UpstreamPacer {
  readonly #intervalMs: number;
  /** The spacing learnt from the upstream's 429s when no rate is configured (0: none learnt). */
  #learntMs = 0;
  #learntAt = 0;
  /** When the relays' last requests were let through (the last second's, to learn a rate from). */
  readonly #recent: number[] = [];
  #next = 0;
  #busyUntil = 0;

  constructor(name: string, options: UpstreamRateOptions | undefined) {
    if (options === undefined) {
      this.#intervalMs = 0;
      return;
    }
    const share = options.relayShare ?? 0.5;
    if (!(options.requestsPerSecond > 0 && Number.isFinite(options.requestsPerSecond))) throw new RangeError(`proxyUpstream(${name}): rate.requestsPerSecond must be a positive number`);
    if (!(share > 0 && share <= 1)) throw new RangeError(`proxyUpstream(${name}): rate.relayShare must be in (0, 1]`);
    this.#intervalMs = 1_000 / (options.requestsPerSecond * share);
  }

  /** Resolves when this relay may send its next request (at once when `signal` aborts). */
  async slot(signal: AbortSignal): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.#busyUntil, this.#next);
    this.#next = at + Math.max(this.#intervalMs, this.#learnt(now));
    this.#recent.push(at);
    while (this.#recent.length > 0 && this.#recent[0]! < at - 1_000) this.#recent.shift();
    if (this.#recent.length > 10_000) this.#recent.shift();
    if (at > now) await sleep(at - now, signal);
  }

  /** The spacing the relays must keep, learnt from the upstream: half the rate it refused at. */
  get intervalMs(): number {
    return Math.max(this.#intervalMs, this.#learnt(Date.now()));
  }

  /**
   * The upstream said it is busy: no relay of this node sends it anything for `ms`, and, unless a
   * rate is configured, the relays keep to half the rate they had reached when it refused
   * (relaxed by half every minute without another refusal).
   */
  busy(ms: number): void {
    const now = Date.now();
    this.#busyUntil = Math.max(this.#busyUntil, now + ms);
    if (this.#intervalMs > 0) return;
    const perSecond = this.#recent.filter((at) => at >= now - 1_000).length;
    const spacing = perSecond > 0 ? Math.min(1_000, 2_000 / perSecond) : this.#learnt(now);
    this.#learntMs = Math.max(this.#learnt(now), spacing);
    this.#learntAt = now;
  }

  #learnt(now: number): number {
    if (this.#learntMs === 0) return 0;
    const halvings = Math.floor((now - this.#learntAt) / 60_000);
    if (halvings === 0) return this.#learntMs;
    const relaxed = this.#learntMs / 2 ** halvings;
    return relaxed < 1 ? 0 : relaxed;
  }
}
