import type { LimitRefusalCounter } from './limit-refusal-counter.js';
import { OwnerRateLimiter } from './owner-rate-limiter.js';

/** Options of {@link RefusalHold}. */
export interface RefusalHoldOptions {
  /** Refusals per second an owner has answered at once: a client that backs off never waits. Default 10. */
  readonly promptPerSecond?: number;
  /** How many refusals an owner has answered at once after a quiet spell. Default 20. */
  readonly promptBurst?: number;
  /**
   * How long a refusal past an owner's prompt share waits before it is answered, on average. Each
   * waits between half and one and a half times this, so the callers held together do not come
   * back together. Default 1 000 ms.
   */
  readonly holdMs?: number;
  /** Refusals held at once for one owner; past it they are answered at once. Default 256. */
  readonly maxPerOwner?: number;
  /** Refusals held at once on this node, all owners together. Default 1 000. */
  readonly maxPerNode?: number;
  /** Largest request (its `Content-Length`) that is held; a larger one, or one of unknown length, is answered at once. Default 16 KiB. */
  readonly maxRequestBytes?: number;
  /** A number in [0, 1) (tests). Default `Math.random`. */
  readonly random?: () => number;
}

export const DEFAULT_REFUSAL_HOLD = { promptPerSecond: 10, promptBurst: 20, holdMs: 1_000, maxPerOwner: 256, maxPerNode: 1_000, maxRequestBytes: 16 * 1024 } as const;

interface Held {
  readonly timer: ReturnType<typeof setTimeout>;
  readonly answer: () => void;
}

/**
 * Paces the answers to requests a limit refused. A client that sends its next request as soon as
 * it is refused (a retry loop, a flood of listens) otherwise gets its refusals back as fast as the
 * node can write them, and the node spends its turns on them ahead of everyone else's requests:
 * refusing is cheap, but never free. Past a small prompt share per owner, a refusal is answered
 * after a hold, so such a loop sends about one request per hold instead of one per refusal.
 *
 * What a hold keeps is bounded: a count per owner and per node, and only small requests; past
 * either a refusal is answered at once, as without the hold. {@link stop} answers every held
 * refusal at once, and every later one (a node that drains or closes). Built with `false`, it holds
 * nothing and only counts.
 */
export class RefusalHold {
  readonly holdMs: number;
  readonly maxPerOwner: number;
  readonly maxPerNode: number;
  readonly maxRequestBytes: number;
  readonly #prompt: OwnerRateLimiter;
  readonly #random: () => number;
  readonly #counter: LimitRefusalCounter | undefined;
  readonly #byOwner = new Map<string, number>();
  readonly #held = new Set<Held>();
  #stopped = false;

  constructor(holdOptions: RefusalHoldOptions | false = {}, counter?: LimitRefusalCounter) {
    const options = holdOptions === false ? {} : holdOptions;
    this.#stopped = holdOptions === false;
    this.#counter = counter;
    this.holdMs = positive(options.holdMs ?? DEFAULT_REFUSAL_HOLD.holdMs, 'holdMs');
    this.maxPerOwner = count(options.maxPerOwner ?? DEFAULT_REFUSAL_HOLD.maxPerOwner, 'maxPerOwner');
    this.maxPerNode = count(options.maxPerNode ?? Math.max(DEFAULT_REFUSAL_HOLD.maxPerNode, this.maxPerOwner), 'maxPerNode');
    this.maxRequestBytes = count(options.maxRequestBytes ?? DEFAULT_REFUSAL_HOLD.maxRequestBytes, 'maxRequestBytes');
    const promptPerSecond = positive(options.promptPerSecond ?? DEFAULT_REFUSAL_HOLD.promptPerSecond, 'promptPerSecond');
    const promptBurst = positive(options.promptBurst ?? Math.max(DEFAULT_REFUSAL_HOLD.promptBurst, promptPerSecond), 'promptBurst');
    this.#prompt = new OwnerRateLimiter({ requestsPerSecond: promptPerSecond, burst: promptBurst });
    this.#random = options.random ?? Math.random;
  }

  /**
   * `answer`, once the refusal by `limit` of `ownerKey`'s request of `requestBytes` (its body's
   * length, `undefined` when unknown) has waited its hold: at once within the owner's prompt
   * share, past a cap, or for a request too large (or of unknown length) to keep.
   */
  hold<T>(ownerKey: string, requestBytes: number | undefined, limit: string, answer: T): Promise<T> {
    const held = !this.#stopped && this.#prompt.take(ownerKey) > 0 && this.#keeps(ownerKey, requestBytes);
    this.#counter?.refused(limit, held);
    if (!held) return Promise.resolve(answer);
    this.#byOwner.set(ownerKey, (this.#byOwner.get(ownerKey) ?? 0) + 1);
    return new Promise<T>((resolve) => {
      const held: Held = {
        timer: setTimeout(() => held.answer(), this.holdMs * (0.5 + this.#random())),
        answer: () => {
          if (!this.#held.delete(held)) return;
          clearTimeout(held.timer);
          const left = (this.#byOwner.get(ownerKey) ?? 1) - 1;
          if (left === 0) this.#byOwner.delete(ownerKey);
          else this.#byOwner.set(ownerKey, left);
          resolve(answer);
        },
      };
      this.#held.add(held);
    });
  }

  /** Whether a refusal of `ownerKey`'s request of `requestBytes` is within the caps of what is held. */
  #keeps(ownerKey: string, requestBytes: number | undefined): boolean {
    if (requestBytes === undefined || requestBytes > this.maxRequestBytes) return false;
    return (this.#byOwner.get(ownerKey) ?? 0) < this.maxPerOwner && this.#held.size < this.maxPerNode;
  }

  /** Answers every held refusal now, and every later one at once. */
  stop(): void {
    this.#stopped = true;
    for (const held of [...this.#held]) held.answer();
  }

  /** Refusals held now. */
  get size(): number {
    return this.#held.size;
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`refusalHold.${name} must be a positive number, got ${value}`);
  return value;
}

function count(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`refusalHold.${name} must be a positive integer, got ${value}`);
  return value;
}

/** `answer` after `hold` held it ({@link RefusalHold.hold}), or at once without a hold. */
export function heldRefusal<T>(hold: RefusalHold | undefined, ownerKey: string, requestBytes: number | undefined, limit: string, answer: T): T | Promise<T> {
  return hold ? hold.hold(ownerKey, requestBytes, limit, answer) : answer;
}
