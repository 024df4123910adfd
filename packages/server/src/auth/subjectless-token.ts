import { JsonRpcError, ErrorCode } from '@mcp-tasks/core';
import { bearerAuthChallengeResponse, getOAuthProtectedResourceMetadataUrl, OAuthError, OAuthErrorCode, type AuthInfo, type McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import type { DirectResponse } from '../direct/direct-exchange.js';
import type { McpTasksHandler } from '../direct/with-task-requests.js';
import { withFetch } from '../handlers/with-fetch.js';

/** Why a verified token without a subject is refused (the `error_description` of the 401). */
export const SUBJECTLESS_TOKEN_MESSAGE = 'Invalid token: it names no subject (sub), so the tasks it made would have no owner of their own';

/**
 * Whether a verified token names no subject (`authInfo.extra.sub` absent or empty). The default
 * owner refuses such a token: falling back to the host scope would let every such token of one
 * client share its tasks.
 */
export function namesNoSubject(authInfo: AuthInfo | undefined): boolean {
  if (authInfo === undefined) return false;
  const sub = authInfo.extra?.['sub'];
  return !(typeof sub === 'string' && sub !== '');
}

/** What `defaultOwnerResolver` throws for such a token, for a host that resolves owners without the handler's front check. */
export class SubjectlessTokenError extends JsonRpcError {
  constructor() {
    super(ErrorCode.InvalidRequest, SUBJECTLESS_TOKEN_MESSAGE);
  }
}

/** HTTP 401 `WWW-Authenticate: Bearer error="invalid_token"` saying the token names no subject. */
export function subjectlessTokenResponse(authInfo: AuthInfo): Response {
  const resource = authInfo.resource;
  const resourceMetadataUrl =
    authInfo.resourceMetadataUrl ?? (resource?.protocol === 'https:' || resource?.protocol === 'http:' ? getOAuthProtectedResourceMetadataUrl(resource) : undefined);
  return bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InvalidToken, SUBJECTLESS_TOKEN_MESSAGE), resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl });
}

/** `handler` refusing every request whose verified token names no subject, on `fetch` and `serveDirect` alike, before anything else sees it. */
export function withSubjectRequired(handler: McpTasksHandler): McpTasksHandler {
  const fetch = (request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> => {
    const authInfo = requestOptions?.authInfo;
    return authInfo && namesNoSubject(authInfo) ? Promise.resolve(subjectlessTokenResponse(authInfo)) : handler.fetch(request, requestOptions);
  };
  const serveDirect: McpTasksHandler['serveDirect'] = async (request) =>
    request.authInfo && namesNoSubject(request.authInfo) ? directOf(subjectlessTokenResponse(request.authInfo)) : handler.serveDirect(request);
  return Object.assign(withFetch(handler, fetch), { serveDirect });
}

async function directOf(response: Response): Promise<DirectResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  return { status: response.status, headers, body: await response.text() };
}
