import type { TaskOwner } from '@mcp-tasks/core';
import type { AuthInfo } from '@modelcontextprotocol/server';

/** What an owner resolver sees of a request. */
export interface OwnerRequest {
  /** The validated token, when the endpoint has authorization. */
  readonly authInfo?: AuthInfo;
  /** The HTTP request, when served over HTTP. */
  readonly request?: Request;
  /** The name of the MCP server serving the request. */
  readonly serverName: string;
}

/**
 * Decides whom a task belongs to. Every `tasks/*` request resolves its owner the same way, and a
 * task is found only by the owner that created it, so every node must resolve the same owner
 * for the same caller.
 */
export type OwnerResolver = (request: OwnerRequest) => TaskOwner | Promise<TaskOwner>;

/** Options of {@link defaultOwnerResolver}. */
export interface DefaultOwnerOptions {
  /**
   * The subject of callers without a token (or with a token that names no subject): one constant
   * host scope, or a function of the request (e.g. per virtual host). Default `"host"`.
   */
  readonly hostScope?: string | ((request: Request | undefined) => string);
}

/** The scope every unauthenticated caller shares by default. */
export const DEFAULT_HOST_SCOPE = 'host';

/**
 * The default owner: the token's subject (`authInfo.extra.sub`) when there is one, otherwise the
 * host scope; the server's name; the token's OAuth client and resource (`''` without a token).
 */
export function defaultOwnerResolver(options: DefaultOwnerOptions = {}): OwnerResolver {
  const hostScope = options.hostScope ?? DEFAULT_HOST_SCOPE;
  const scopeOf = typeof hostScope === 'function' ? hostScope : () => hostScope;
  // `request` is read only for a caller without a subject: a host may build it on first read (the direct path does).
  return (owner) => {
    const { authInfo, serverName } = owner;
    const sub = authInfo?.extra?.['sub'];
    return {
      subject: typeof sub === 'string' && sub !== '' ? sub : scopeOf(owner.request),
      server: serverName,
      clientId: authInfo?.clientId ?? '',
      resource: authInfo?.resource === undefined ? '' : String(authInfo.resource),
    };
  };
}
