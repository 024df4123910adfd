import type { TaskOwner } from '@mcp-tasks/core';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { namesNoSubject, SubjectlessTokenError } from './subjectless-token.js';

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
   * The subject of callers without a token: one constant host scope, or a function of the
   * request (e.g. per virtual host). Default `"host"`. A verified token that names no subject is
   * not such a caller: it is refused ({@link SubjectlessTokenError}; `McpTasks.handler` answers
   * it 401 `invalid_token` before anything resolves an owner).
   */
  readonly hostScope?: string | ((request: Request | undefined) => string);
}

/** The scope every unauthenticated caller shares by default. */
export const DEFAULT_HOST_SCOPE = 'host';

/**
 * The default owner: the token's subject (`authInfo.extra.sub`), or the host scope without a
 * token; the server's name; the token's OAuth client and resource (`''` without a token). A
 * token without a subject throws {@link SubjectlessTokenError}: in the host scope every such
 * token of one client would share its tasks.
 */
export function defaultOwnerResolver(options: DefaultOwnerOptions = {}): OwnerResolver {
  const hostScope = options.hostScope ?? DEFAULT_HOST_SCOPE;
  // `request` is read only by a host-scope function: a host that builds it on demand (the direct
  // path) then builds no WHATWG Request for the requests a constant scope serves.
  const scopeOf = typeof hostScope === 'function' ? (owner: OwnerRequest) => hostScope(owner.request) : () => hostScope;
  return (owner) => {
    const { authInfo, serverName } = owner;
    if (namesNoSubject(authInfo)) throw new SubjectlessTokenError();
    return {
      subject: authInfo ? (authInfo.extra!['sub'] as string) : scopeOf(owner),
      server: serverName,
      clientId: authInfo?.clientId ?? '',
      resource: authInfo?.resource === undefined ? '' : String(authInfo.resource),
    };
  };
}
