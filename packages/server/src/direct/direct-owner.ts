import type { TaskOwner } from '@mcp-tasks/core';
import type { OwnerResolver } from '../owner/owner-resolver.js';
import type { DirectRequest } from '../exchange/direct-exchange.js';

/**
 * The request's owner as the SDK path resolves it, with the WHATWG `Request` built only if the
 * resolver reads it; `undefined` when the resolver fails (the SDK path reports and answers a
 * resolver failure at each of its steps, so the caller leaves the request to it).
 */
export async function directOwnerOf(resolveOwner: OwnerResolver, serverName: string, request: DirectRequest): Promise<TaskOwner | undefined> {
  const authInfo = request.authInfo;
  try {
    return await resolveOwner({
      ...(authInfo === undefined ? {} : { authInfo }),
      get request() {
        return request.toRequest();
      },
      serverName,
    });
  } catch {
    return undefined;
  }
}
