import type { TaskOwner } from '@mcp-tasks/core';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { OwnerResolver } from './owner-resolver.js';
import type { DirectRequest } from '../exchange/direct-exchange.js';

/**
 * The request's owner as the SDK lane resolves it, resolved at most once however many steps of
 * the fast lane ask (its method, then admission's refusal), with the WHATWG `Request` built only
 * if the resolver reads it; `undefined` when the resolver fails (the SDK lane reports and answers
 * a resolver failure at each of its steps, so the fast lane leaves the request to it).
 */
export function requestOwnerOnce(resolveOwner: OwnerResolver, serverName: string, request: DirectRequest): () => Promise<TaskOwner | undefined> {
  let owner: Promise<TaskOwner | undefined> | undefined;
  return () => (owner ??= requestOwnerOf(resolveOwner, serverName, request));
}

async function requestOwnerOf(resolveOwner: OwnerResolver, serverName: string, request: DirectRequest): Promise<TaskOwner | undefined> {
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

/** The SDK lane's owner of a request: what the resolver says of its token and its WHATWG `Request`. */
export function ownerOfRequest(resolveOwner: OwnerResolver, serverName: string): (authInfo: AuthInfo | undefined, request: Request | undefined) => Promise<TaskOwner> {
  return (authInfo, request) => Promise.resolve(resolveOwner({ authInfo, request, serverName }));
}
