/** Options of {@link OwnerRateLimiter}. */
export interface RateLimitOptions {
  /** Tokens an owner's bucket regains per second: its sustained rate. Default 50. */
  readonly requestsPerSecond?: number;
  /** Size of an owner's bucket: how many requests it may send at once after a quiet spell. Default 200. */
  readonly burst?: number;
  /**
   * Owners whose buckets are kept; past it the least recently seen is forgotten (it comes back
   * with a full bucket). Bounds memory whatever the number of owners a caller can mint. Default 10 000.
   */
  readonly maxOwners?: number;
  /** The clock, in milliseconds (tests). Default `performance.now`. */
  readonly now?: () => number;
}

export const DEFAULT_RATE_LIMIT = { requestsPerSecond: 50, burst: 200 } as const;
const DEFAULT_MAX_OWNERS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per owner key, in one process: each request takes one token, buckets refill at
 * `requestsPerSecond` up to `burst`. The map is bounded and evicts the least recently used owner,
 * so minting owners costs the attacker, not the node's memory.
 */
export class OwnerRateLimiter {
  readonly requestsPerSecond: number;
  readonly burst: number;
  readonly #maxOwners: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions = {}) {
    this.requestsPerSecond = positive(options.requestsPerSecond ?? DEFAULT_RATE_LIMIT.requestsPerSecond, 'requestsPerSecond');
    this.burst = positive(options.burst ?? Math.max(DEFAULT_RATE_LIMIT.burst, this.requestsPerSecond), 'burst');
    this.#maxOwners = positive(options.maxOwners ?? DEFAULT_MAX_OWNERS, 'maxOwners');
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Takes `cost` tokens of `key`'s bucket (one by default): 0 when granted, otherwise the
   * milliseconds until they are back. `requestsPerSecond` (at least the limiter's own) is this
   * owner's sustained rate now; its bucket then holds at least one second of it. A cost above
   * what the bucket holds costs a full bucket, so every request can pass one day.
   */
  take(key: string, requestsPerSecond = this.requestsPerSecond, cost = 1): number {
    const rate = Math.max(this.requestsPerSecond, requestsPerSecond);
    const bucket = this.#refilled(key, rate);
    const tokens = this.#price(cost, rate);
    if (bucket.tokens >= tokens) {
      bucket.tokens -= tokens;
      return 0;
    }
    return this.#wait(bucket, rate, tokens);
  }

  /**
   * What {@link take} would answer, without taking: 0 when a token is there (none is taken), otherwise
   * the milliseconds until one is back, with the bookkeeping of a refused take (so a refusal decided
   * here leaves the bucket as `take` refusing would).
   */
  retryAfter(key: string, requestsPerSecond = this.requestsPerSecond, cost = 1): number {
    const rate = Math.max(this.requestsPerSecond, requestsPerSecond);
    const bucket = this.#refilled(key, rate);
    const tokens = this.#price(cost, rate);
    return bucket.tokens >= tokens ? 0 : this.#wait(bucket, rate, tokens);
  }

  /** `cost` in tokens, at most what a bucket at `rate` holds. */
  #price(cost: number, rate: number): number {
    return Math.min(cost, this.#capacity(rate));
  }

  #capacity(rate: number): number {
    return Math.max(this.burst, rate);
  }

  /** `key`'s bucket refilled to now at `rate`, made the most recently used. */
  #refilled(key: string, rate: number): Bucket {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key);
      bucket.tokens = Math.min(this.#capacity(rate), bucket.tokens + ((now - bucket.at) / 1000) * rate);
      bucket.at = now;
    } else {
      bucket = { tokens: this.burst, at: now };
      if (this.#buckets.size >= this.#maxOwners) this.#buckets.delete(this.#buckets.keys().next().value as string);
    }
    // Re-inserted last: the Map's order is the recency order.
    this.#buckets.set(key, bucket);
    return bucket;
  }

  #wait(bucket: Bucket, rate: number, tokens: number): number {
    return ((tokens - bucket.tokens) / rate) * 1000;
  }

  /** Owners with a bucket (at most `maxOwners`). */
  get size(): number {
    return this.#buckets.size;
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`rateLimit.${name} must be a positive number, got ${value}`);
  return value;
}
