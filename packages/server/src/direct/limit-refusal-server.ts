import { ownerKey } from '@mcp-tasks/core';
import { checkRequestBody } from '../front/check-request-body.js';
import { rateLimitedRequest } from '../limits/rate-limited-request.js';
import type { Admission } from '../limits/admission.js';
import type { OwnerResolver } from '../owner/owner-resolver.js';
import { bodyBytesOf, type DirectRequest, type DirectResponse } from '../exchange/direct-exchange.js';
import { directOwnerOf } from './direct-owner.js';

/** What {@link limitRefusalServer} needs: the limits and the owner of the SDK path's listen edge. */
export interface LimitRefusalServerOptions {
  readonly resolveOwner: OwnerResolver;
  readonly serverName: string;
  readonly admission: Admission;
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
  const { resolveOwner, serverName, admission } = options;
  return async (request) => {
    if (!admission.any) return undefined;
    const limited = rateLimitedRequest(request.body);
    // The body checks come first on the SDK path: what they refuse is theirs to answer.
    if (!limited || limited.kind !== 'task' || checkRequestBody(request.body)) return undefined;
    const owner = await directOwnerOf(resolveOwner, serverName, request);
    if (owner === undefined) return undefined;
    const call = { ownerKey: ownerKey(owner), authenticated: request.authInfo !== undefined, taskId: limited.taskId, queue: limited.method !== 'subscriptions/listen' };
    return admission.refuseNow(call, limited.id, bodyBytesOf(request));
  };
}
