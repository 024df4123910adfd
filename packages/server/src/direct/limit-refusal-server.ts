import { ownerKey } from '@mcp-tasks/core';
import { checkRequestBody } from '../front/check-request-body.js';
import { heldLimitRefusal } from '../limits/limit-refusal.js';
import { rateLimitedRequest } from '../limits/rate-limited-request.js';
import type { RefusalHold } from '../limits/refusal-hold.js';
import type { RequestLimits } from '../limits/request-limits.js';
import type { OwnerResolver } from '../owner/owner-resolver.js';
import type { DirectRequest, DirectResponse } from '../exchange/direct-exchange.js';
import { directOwnerOf } from './direct-owner.js';

/** What {@link limitRefusalServer} needs: the limits and the owner of the SDK path's listen edge. */
export interface LimitRefusalServerOptions {
  readonly resolveOwner: OwnerResolver;
  readonly serverName: string;
  readonly limits?: RequestLimits | undefined;
  readonly refusalHold?: RefusalHold | undefined;
}

/**
 * Answers on the direct path the requests the limits refuse at once that the other direct servers
 * leave to the SDK path (a `subscriptions/listen`, a 2025-11-25 `tasks/*` or answer): no WHATWG
 * `Request`, no handler chain, no `Response`. A flood of refused listens is mostly that cost, and
 * it sits in the event loop's queue ahead of everyone else's requests. The checks are those of the
 * SDK path's edge (`withTaskListen`), with its bookkeeping ({@link RequestLimits.refusal}), so
 * the answer and the limits' state are the ones that path leaves; a request they would admit or
 * queue is left to it (`undefined`), untaken, which then counts it as before.
 */
export function limitRefusalServer(options: LimitRefusalServerOptions): (request: DirectRequest) => Promise<DirectResponse | undefined> {
  const { resolveOwner, serverName, limits, refusalHold } = options;
  return async (request) => {
    if (!limits?.any) return undefined;
    const limited = rateLimitedRequest(request.body);
    // The body checks come first on the SDK path: what they refuse is theirs to answer.
    if (!limited || limited.kind !== 'task' || checkRequestBody(request.body)) return undefined;
    const owner = await directOwnerOf(resolveOwner, serverName, request);
    if (owner === undefined) return undefined;
    const key = ownerKey(owner);
    const refusal = limits.refusal({ ownerKey: key, authenticated: request.authInfo !== undefined, taskId: limited.taskId, queue: limited.method !== 'subscriptions/listen' });
    return refusal ? heldLimitRefusal(refusalHold, key, request, limited.id, refusal) : undefined;
  };
}
