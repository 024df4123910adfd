import { InFlightLimitError } from '@mcp-tasks/core';
import type { ReleaseSlot } from './listen-stream-caps.js';

/** Options of {@link OwnerInFlightCap}. */
export interface InFlightOptions {
  /** Requests one owner has served on this node at once; more wait in the owner's queue. Default 8. */
  readonly maxPerOwner?: number;
  /**
   * Requests of one owner waiting at once; past it they are refused. Default 128: with
   * `maxPerOwner`, 136 at once are never refused, more than an owner polling every task of the
   * default quota (100) together sends.
   */
  readonly maxQueuedPerOwner?: number;
  /** Longest a request waits for one of its owner's slots; past it it is refused. Default 2 000 ms, the node admission's own wait: a slow node does not refuse an owner sooner than it would shed. */
  readonly maxWaitMs?: number;
}

export const DEFAULT_IN_FLIGHT = { maxPerOwner: 8, maxQueuedPerOwner: 128, maxWaitMs: 2_000 } as const;

interface OwnerSlots {
  running: number;
  readonly waiting: Array<{ readonly admit: (release: ReleaseSlot) => void; readonly timer: ReturnType<typeof setTimeout> }>;
}

/**
 * Counts each authenticated owner's requests under way on one node. The rate limit bounds how
 * many an owner sends per second, not how many wait at once: without this an owner's burst sits in
 * the node's queue ahead of everyone else's requests. Past `maxPerOwner` a request waits briefly in
 * its owner's FIFO (a client sending 32 reads at once is served, a few milliseconds later); only
 * past that queue's bound or its wait limit is it refused. Each owner has its own slots and queue,
 * so one owner's queue never delays another's; an owner with nothing in flight holds no entry.
 */
export class OwnerInFlightCap {
  readonly maxPerOwner: number;
  readonly maxQueuedPerOwner: number;
  readonly maxWaitMs: number;
  readonly #byOwner = new Map<string, OwnerSlots>();
  readonly #limit: string;

  /** `limit` names this cap in its refusals (another instance counts task tool runs). */
  constructor(options: InFlightOptions = {}, limit = 'inFlight.maxPerOwner') {
    this.#limit = limit;
    this.maxPerOwner = count(options.maxPerOwner ?? DEFAULT_IN_FLIGHT.maxPerOwner, `${limit.split('.')[0]}.maxPerOwner`, 1);
    this.maxQueuedPerOwner = count(options.maxQueuedPerOwner ?? DEFAULT_IN_FLIGHT.maxQueuedPerOwner, `${limit.split('.')[0]}.maxQueuedPerOwner`, 0);
    this.maxWaitMs = count(options.maxWaitMs ?? DEFAULT_IN_FLIGHT.maxWaitMs, `${limit.split('.')[0]}.maxWaitMs`, 1);
  }

  /**
   * A slot of `ownerKey`'s share: at once when one is free, otherwise when one of its requests is
   * answered; rejects with {@link InFlightLimitError} when its queue is full or the wait is over,
   * or at once when its share is full and `queue` is false.
   */
  enter(ownerKey: string, queue = true): ReleaseSlot | Promise<ReleaseSlot> {
    let slots = this.#byOwner.get(ownerKey);
    if (!slots) this.#byOwner.set(ownerKey, (slots = { running: 0, waiting: [] }));
    if (slots.running < this.maxPerOwner) {
      slots.running += 1;
      return this.#releaser(ownerKey, slots);
    }
    if (!queue || slots.waiting.length >= this.maxQueuedPerOwner) return Promise.reject(this.refusal());
    const owner = slots;
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter = {
        admit: resolve,
        timer: setTimeout(() => {
          const at = owner.waiting.indexOf(waiter);
          if (at < 0) return;
          owner.waiting.splice(at, 1);
          reject(this.refusal());
        }, this.maxWaitMs),
      };
      owner.waiting.push(waiter);
    });
  }

  /** The refusal of this cap. */
  refusal(): InFlightLimitError {
    return new InFlightLimitError(this.#limit, this.maxPerOwner);
  }

  #releaser(ownerKey: string, slots: OwnerSlots): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slots.waiting.shift();
      if (next) {
        // The slot goes straight to the owner's next request: running stays the same.
        clearTimeout(next.timer);
        next.admit(this.#releaser(ownerKey, slots));
        return;
      }
      slots.running -= 1;
      if (slots.running === 0) this.#byOwner.delete(ownerKey);
    };
  }

  /** Whether a request of `ownerKey` arriving now would be refused at once (its share and its queue are full; its share alone when it may not `queue`). */
  refuses(ownerKey: string, queue = true): boolean {
    const slots = this.#byOwner.get(ownerKey);
    return slots !== undefined && slots.running >= this.maxPerOwner && (!queue || slots.waiting.length >= this.maxQueuedPerOwner);
  }

  /** Requests of `ownerKey` under way (not counting those waiting). */
  inFlight(ownerKey: string): number {
    return this.#byOwner.get(ownerKey)?.running ?? 0;
  }

  /** Owners with a request under way. */
  get owners(): number {
    return this.#byOwner.size;
  }
}

function count(value: number, name: string, least: number): number {
  if (!Number.isSafeInteger(value) || value < least) throw new Error(`${name} must be an integer of at least ${least}, got ${value}`);
  return value;
}
