import { InFlightLimitError } from '@mcp-tasks/core';
import type { ReleaseSlot } from './listen-stream-caps.js';

/** Options of {@link OwnerInFlightCap}. */
export interface InFlightOptions {
  /** Requests one owner may have under way on this node at once; more are refused until one is answered. Default 8. */
  readonly maxPerOwner?: number;
}

export const DEFAULT_IN_FLIGHT = { maxPerOwner: 8 } as const;

/**
 * Counts each owner's requests under way on one node. The rate limit bounds how many an owner
 * sends per second, not how many wait at once: without this an owner's burst sits in the node's
 * queue ahead of everyone else's requests. Each owner has its own count and no node-wide pool,
 * so no owner can use another's share; an owner with nothing in flight holds no entry.
 */
export class OwnerInFlightCap {
  readonly maxPerOwner: number;
  readonly #byOwner = new Map<string, number>();

  constructor(options: InFlightOptions = {}) {
    const max = options.maxPerOwner ?? DEFAULT_IN_FLIGHT.maxPerOwner;
    if (!Number.isSafeInteger(max) || max < 1) throw new Error(`inFlight.maxPerOwner must be a positive integer, got ${max}`);
    this.maxPerOwner = max;
  }

  /** Counts a request of `ownerKey` as under way, or throws {@link InFlightLimitError} when its share is full. */
  enter(ownerKey: string): ReleaseSlot {
    const count = this.#byOwner.get(ownerKey) ?? 0;
    if (count >= this.maxPerOwner) throw new InFlightLimitError('inFlight.maxPerOwner', this.maxPerOwner);
    this.#byOwner.set(ownerKey, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#byOwner.get(ownerKey) ?? 1) - 1;
      if (left === 0) this.#byOwner.delete(ownerKey);
      else this.#byOwner.set(ownerKey, left);
    };
  }

  /** Requests of `ownerKey` under way. */
  inFlight(ownerKey: string): number {
    return this.#byOwner.get(ownerKey) ?? 0;
  }

  /** Owners with a request under way. */
  get owners(): number {
    return this.#byOwner.size;
  }
}
