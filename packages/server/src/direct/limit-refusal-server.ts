import { InFlightLimitError, ownerKey, RateLimitedError } from '@mcp-tasks/core';
import { checkRequestBody } from '../handlers/check-request-body.js';
import type { OwnerInFlightCap } from '../limits/owner-in-flight-cap.js';
import type { OwnerRateLimiter } from '../limits/owner-rate-limiter.js';
import { rateLimitedRequest } from '../limits/rate-limited-request.js';
import type { OwnerResolver } from '../owner/owner-resolver.js';
import type { DirectRequest, DirectResponse } from './direct-exchange.js';
import { directOwnerOf } from './direct-owner.js';
import { heldLimitRefusal } from '../limits/limit-refusal.js';
import type { RefusalHold } from '../limits/refusal-hold.js';

/** What {@link limitRefusalServer} needs: the limits and the owner of the SDK path's listen edge. */
export interface LimitRefusalServerOptions {
  readonly resolveOwner: OwnerResolver;
  readonly serverName: string;
  readonly rateLimiter?: OwnerRateLimiter | undefined;
  readonly inFlight?: OwnerInFlightCap | undefined;
  readonly refusalHold?: RefusalHold | undefined;
}

/**
 * Answers on the direct path the requests the per-owner rate limit or in-flight cap refuses that
 * the other direct servers leave to the SDK path (a `subscriptions/listen`, a 2025-11-25 `tasks/*`):
 * no WHATWG `Request`, no handler chain, no `Response`. A flood of refused listens is mostly
 * that cost, and it sits in the event loop's queue ahead of everyone else's requests. The checks
 * are those of the SDK path's edge (`withTaskListen`), in its order and with its bookkeeping, so
 * the answer and the limits' state are the ones that path leaves; a request they let through is
 * left to it (`undefined`), which then counts it as before.
 */
export function limitRefusalServer(options: LimitRefusalServerOptions): (request: DirectRequest) => Promise<DirectResponse | undefined> {
  const { resolveOwner, serverName, rateLimiter, inFlight, refusalHold } = options;
  return async (request) => {
    if (!rateLimiter && !inFlight) return undefined;
    const limited = rateLimitedRequest(request.body);
    // The body checks come first on the SDK path: what they refuse is theirs to answer.
    if (!limited || checkRequestBody(request.body)) return undefined;
    const owner = await directOwnerOf(resolveOwner, serverName, request);
    if (owner === undefined) return undefined;
    const key = ownerKey(owner);
    const rateRefuses = rateLimiter !== undefined && rateLimiter.retryAfter(key) > 0;
    if (!rateRefuses && !(inFlight !== undefined && inFlight.inFlight(key) >= inFlight.maxPerOwner)) return undefined;
    // One of them refuses: the SDK path's steps from here, so a refusal by the in-flight cap still takes its token.
    const retryAfterMs = rateLimiter ? rateLimiter.take(key) : 0;
    if (retryAfterMs > 0) return heldLimitRefusal(refusalHold, key, request, limited.id, new RateLimitedError(retryAfterMs));
    try {
      inFlight?.enter(key)();
    } catch (error) {
      if (error instanceof InFlightLimitError) return heldLimitRefusal(refusalHold, key, request, limited.id, error);
      throw error;
    }
    // Not reached: nothing awaited since the checks above, so one of the two refused.
    return undefined;
  };
}
