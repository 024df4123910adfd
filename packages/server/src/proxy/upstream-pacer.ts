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
    this.#next = at + this.#intervalMs;
    if (at > now) await sleep(at - now, signal);
  }

  /** The upstream said it is busy: no relay of this node sends it anything for `ms`. */
  busy(ms: number): void {
    this.#busyUntil = Math.max(this.#busyUntil, Date.now() + ms);
  }
}
