import { NodeSaturatedError, RateLimitedError } from '@mcp-tasks/core';
import type { ReleaseSlot } from './listen-stream-caps.js';
import { OwnerInFlightCap } from './owner-in-flight-cap.js';
import { OwnerRateLimiter } from './owner-rate-limiter.js';
import type { LimitedCall } from './request-limits.js';

/** Options of {@link ToolRunLimits}. */
export interface ToolRunOptions {
  /**
   * Task tool calls (a task created, or a run inline) one authenticated owner starts per second,
   * sustained. Default 10; its burst is `createBurst`. Off with the rate limit (`rateLimit: false`).
   */
  readonly createsPerSecond?: number;
  /** How many such calls an owner starts at once after a quiet spell. Default 100 (the default quota). */
  readonly createBurst?: number;
  /** Task tool calls of one authenticated owner under way at once (an inline run until it ends); more wait briefly, then are refused. Default 16. */
  readonly maxPerOwner?: number;
  /** Task tool calls under way on this node, all callers together; past it HTTP 503. Default 256. */
  readonly maxPerNode?: number;
}

export const DEFAULT_TOOL_RUNS = { createsPerSecond: 10, createBurst: 100, maxPerOwner: 16, maxPerNode: 256 } as const;

/**
 * What a `tools/call` of a task tool meets: it creates a task row (kept until its TTL) or holds a
 * run open inline, so it is bounded apart from the reads. An authenticated owner has a creation
 * rate and a share of the calls under way (a brief FIFO past it); the node bounds them all, so
 * callers without a subject are bounded by the node, never by a per-owner cap that is really a
 * node cap. A task's own run, once created, is the runtime's (`maxConcurrentRuns`).
 */
export class ToolRunLimits {
  readonly maxPerNode: number;
  readonly #creates: OwnerRateLimiter | undefined;
  readonly #perOwner: OwnerInFlightCap;
  #running = 0;

  constructor(options: ToolRunOptions = {}, rateLimited = true) {
    this.#creates = rateLimited
      ? new OwnerRateLimiter({ requestsPerSecond: options.createsPerSecond ?? DEFAULT_TOOL_RUNS.createsPerSecond, burst: options.createBurst ?? DEFAULT_TOOL_RUNS.createBurst })
      : undefined;
    const maxPerOwner = options.maxPerOwner ?? DEFAULT_TOOL_RUNS.maxPerOwner;
    // A call waits at most a second for a slot: an inline run holds its slot for the whole run.
    this.#perOwner = new OwnerInFlightCap({ maxPerOwner, maxQueuedPerOwner: maxPerOwner, maxWaitMs: 1_000 }, 'toolRuns.maxPerOwner');
    const maxPerNode = options.maxPerNode ?? DEFAULT_TOOL_RUNS.maxPerNode;
    if (!Number.isSafeInteger(maxPerNode) || maxPerNode < 1) throw new Error(`toolRuns.maxPerNode must be a positive integer, got ${maxPerNode}`);
    this.maxPerNode = maxPerNode;
  }

  /** Admits a task tool call of `call`'s owner: the slot to give back when it is answered. Throws or rejects with the refusal. */
  enter(call: LimitedCall): ReleaseSlot | Promise<ReleaseSlot> {
    if (call.authenticated && this.#creates) {
      const retryAfterMs = this.#creates.take(call.ownerKey);
      if (retryAfterMs > 0) throw new RateLimitedError(retryAfterMs, 'toolRuns.createsPerSecond');
    }
    const owner = call.authenticated ? this.#perOwner.enter(call.ownerKey) : () => {};
    const node = (ownerSlot: ReleaseSlot): ReleaseSlot => {
      if (this.#running >= this.maxPerNode) {
        ownerSlot();
        throw new NodeSaturatedError('toolRuns.maxPerNode', 1_000);
      }
      this.#running += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.#running -= 1;
        ownerSlot();
      };
    };
    return typeof owner === 'function' ? node(owner) : owner.then(node);
  }

  /** Task tool calls under way on this node. */
  get running(): number {
    return this.#running;
  }
}
