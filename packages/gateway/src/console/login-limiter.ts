/** Options of {@link LoginLimiter}. */
export interface LoginLimiterOptions {
  /** Failed sign-ins one address may make per window. Default 10. */
  readonly maxFailures?: number;
  /** The window (ms). Default 60 000. */
  readonly windowMs?: number;
  /** Addresses remembered at once; past it the oldest is forgotten. Default 10 000. */
  readonly maxAddresses?: number;
}

/**
 * Bounds guessing at the login form: an address that failed `maxFailures` times within
 * `windowMs` is refused (429) until the window from its first failure ends, whatever it sends,
 * so a correct guess made while blocked is not confirmed either. Memory is bounded by
 * `maxAddresses`. Per node: a cluster of N nodes allows N times as many.
 */
export class LoginLimiter {
  readonly #maxFailures: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;
  readonly #failures = new Map<string, { since: number; count: number }>();

  constructor(options: LoginLimiterOptions = {}) {
    this.#maxFailures = options.maxFailures ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
  }

  /** Milliseconds until `address` may try again, or 0 when it may now. */
  retryAfterMs(address: string, now = Date.now()): number {
    const entry = this.#failures.get(address);
    if (!entry) return 0;
    const ends = entry.since + this.#windowMs;
    if (ends <= now) {
      this.#failures.delete(address);
      return 0;
    }
    return entry.count >= this.#maxFailures ? ends - now : 0;
  }

  failed(address: string, now = Date.now()): void {
    const entry = this.#failures.get(address);
    if (entry && entry.since + this.#windowMs > now) {
      entry.count += 1;
      return;
    }
    this.#failures.delete(address);
    if (this.#failures.size >= this.#maxAddresses) this.#failures.delete(this.#failures.keys().next().value!);
    this.#failures.set(address, { since: now, count: 1 });
  }

  succeeded(address: string): void {
    this.#failures.delete(address);
  }
}
