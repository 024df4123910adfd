import { InFlightLimitError, NodeSaturatedError, RateLimitedError, type JsonRpcError } from '@mcp-tasks/core';
import type { MeterProvider } from '@opentelemetry/api';
import type { ReleaseSlot } from './listen-stream-caps.js';
import { NodeAdmission, type AdmissionOptions } from './node-admission.js';
import { OwnerInFlightCap, type InFlightOptions } from './owner-in-flight-cap.js';
import { OwnerRateLimiter, type RateLimitOptions } from './owner-rate-limiter.js';
import { OwnerTaskBudget } from './owner-task-budget.js';
import { ToolRunLimits, type ToolRunOptions } from './tool-run-limits.js';

/** Options of {@link RequestLimits}: those of `McpTasks` and what they follow of the runtime. */
export interface RequestLimitsOptions {
  readonly rateLimit?: RateLimitOptions | false | undefined;
  readonly inFlight?: InFlightOptions | false | undefined;
  readonly admission?: AdmissionOptions | false | undefined;
  readonly toolRuns?: ToolRunOptions | false | undefined;
  /** The runtime's `pollIntervalMs`: an owner's rate follows its tasks polled at it. */
  readonly pollIntervalMs: number;
  /** The runtime's `maxPerPrincipal`: no owner's rate counts more tasks. */
  readonly maxTasksPerOwner: number;
  readonly meterProvider?: MeterProvider | undefined;
  /** The clock of the rates, in milliseconds (tests). Default `performance.now`. */
  readonly now?: () => number;
}

/** One request as the limits see it. */
export interface LimitedCall {
  readonly ownerKey: string;
  /**
   * Whether the request carries an authenticated subject (auth info). Only then do the per-owner
   * limits apply: without one every caller is the same owner, and a per-owner limit would be a
   * node-wide cap that refuses ordinary traffic. The node's admission control protects it instead.
   */
  readonly authenticated: boolean;
  /** The task the request names, if one: an owner's rate follows the tasks it polls. */
  readonly taskId?: string | undefined;
  /**
   * Whether the request may wait for its owner's share (default true). A `subscriptions/listen`
   * may not: a client that behaves opens a stream, not nine at once, and a flood of listens that
   * waited instead of being refused (and its refusals held) would keep the owner's whole share
   * busy with the most expensive request there is.
   */
  readonly queue?: boolean | undefined;
  /** What the request costs its owner's rate, in tokens (default 1; a listen more: `requestCost`). */
  readonly cost?: number | undefined;
}

const NOTHING: ReleaseSlot = () => {};

/**
 * Every limit a request meets on this node, in one place and in one order: an authenticated
 * owner's rate (following its tasks) and its in-flight share (a brief FIFO before refusing), then
 * the node's admission control, which every request meets, authenticated or not. Refusals are
 * typed: an owner's limit is a {@link RateLimitedError} or an {@link InFlightLimitError} (HTTP
 * 429), the node's saturation a {@link NodeSaturatedError} (HTTP 503).
 */
export class RequestLimits {
  readonly rateLimiter: OwnerRateLimiter | undefined;
  readonly inFlight: OwnerInFlightCap | undefined;
  readonly admission: NodeAdmission | undefined;
  /** What task tool calls meet (the creation rate, the runs held open). */
  readonly toolRuns: ToolRunLimits | undefined;
  readonly #budget: OwnerTaskBudget;

  constructor(options: RequestLimitsOptions) {
    const clock = options.now ? { now: options.now } : {};
    this.rateLimiter = options.rateLimit === false ? undefined : new OwnerRateLimiter({ ...options.rateLimit, ...clock });
    this.inFlight = options.inFlight === false ? undefined : new OwnerInFlightCap(options.inFlight);
    this.admission = options.admission === false ? undefined : new NodeAdmission(options.admission, options.meterProvider);
    this.toolRuns = options.toolRuns === false ? undefined : new ToolRunLimits(options.toolRuns, options.rateLimit !== false);
    this.#budget = new OwnerTaskBudget({ pollIntervalMs: options.pollIntervalMs, maxTasksPerOwner: options.maxTasksPerOwner, ...clock });
  }

  /** Whether any limit is on (a request then needs its owner resolved before it is served). */
  get any(): boolean {
    return this.rateLimiter !== undefined || this.inFlight !== undefined || this.admission !== undefined;
  }

  /** Stops what reports on the limits (the admission's gauge): the node closes. */
  stop(): void {
    this.admission?.stop();
  }

  /**
   * Admits `call`, once it waited its turn (if it must): the slot to give back when it is answered.
   * Throws or rejects with the refusal ({@link isLimitRefusal}).
   */
  enter(call: LimitedCall): ReleaseSlot | Promise<ReleaseSlot> {
    if (call.authenticated && this.rateLimiter) {
      const retryAfterMs = this.rateLimiter.take(call.ownerKey, this.#budget.rate(call.ownerKey, call.taskId), call.cost);
      if (retryAfterMs > 0) throw new RateLimitedError(retryAfterMs);
    }
    const owner = call.authenticated && this.inFlight ? this.inFlight.enter(call.ownerKey, call.queue ?? true) : NOTHING;
    if (!this.admission) return owner;
    const admission = this.admission;
    const key = call.authenticated ? call.ownerKey : '';
    const both = (ownerSlot: ReleaseSlot): ReleaseSlot | Promise<ReleaseSlot> => {
      let node: ReleaseSlot | Promise<ReleaseSlot>;
      try {
        node = admission.enter(key);
      } catch (error) {
        ownerSlot();
        throw error;
      }
      if (typeof node === 'function') return joined(ownerSlot, node);
      return node.then(
        (nodeSlot) => joined(ownerSlot, nodeSlot),
        (error: unknown) => {
          ownerSlot();
          throw error;
        },
      );
    };
    return typeof owner === 'function' ? both(owner) : owner.then(both);
  }

  /**
   * {@link enter} for a request of `kind` (`toolCall`: a call of a task tool, which meets
   * {@link toolRuns} instead), with its refusal as the answer rather than thrown.
   */
  async admit(call: LimitedCall, kind: 'task' | 'toolCall' = 'task'): Promise<ReleaseSlot | LimitRefusalError> {
    try {
      return await (kind === 'toolCall' ? (this.toolRuns?.enter(call) ?? NOTHING) : this.enter(call));
    } catch (error) {
      if (isLimitRefusal(error)) return error;
      throw error;
    }
  }

  /**
   * What {@link enter} would refuse at once, without queueing anything: the refusal, with the
   * bookkeeping of a refused `enter` (the rate token taken), or `undefined` when `enter` would
   * admit or queue the call (nothing is then taken). Lets a cheap path answer a flood's refusals.
   */
  refusal(call: LimitedCall): JsonRpcError | undefined {
    const rated = call.authenticated && this.rateLimiter !== undefined;
    const rate = rated ? this.#budget.rate(call.ownerKey, call.taskId) : 0;
    const retryAfterMs = rated ? this.rateLimiter!.retryAfter(call.ownerKey, rate, call.cost) : 0;
    if (retryAfterMs > 0) return new RateLimitedError(retryAfterMs);
    const ownerRefuses = call.authenticated && this.inFlight !== undefined && this.inFlight.refuses(call.ownerKey, call.queue ?? true);
    const nodeRefuses = this.admission !== undefined && this.admission.full;
    if (!ownerRefuses && !nodeRefuses) return undefined;
    // A refused enter took its rate token before meeting the caps. A token seen above is still
    // there (time only adds tokens), so this take cannot turn into a refusal of its own.
    if (rated) this.rateLimiter!.take(call.ownerKey, rate, call.cost);
    return ownerRefuses ? this.inFlight!.refusal() : new NodeSaturatedError('admission.maxQueue', this.admission!.maxWaitMs);
  }
}

/** A refusal of one of these limits. */
export type LimitRefusalError = RateLimitedError | InFlightLimitError | NodeSaturatedError;

/** Whether `error` is a refusal of one of these limits (answered as such, not as a failure). */
export function isLimitRefusal(error: unknown): error is LimitRefusalError {
  return error instanceof RateLimitedError || error instanceof InFlightLimitError || error instanceof NodeSaturatedError;
}

function joined(first: ReleaseSlot, second: ReleaseSlot): ReleaseSlot {
  return () => {
    second();
    first();
  };
}
