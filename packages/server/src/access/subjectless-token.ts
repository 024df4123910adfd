import { JsonRpcError, ErrorCode } from '@mcp-tasks/core';
import { bearerAuthChallengeResponse, getOAuthProtectedResourceMetadataUrl, OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';

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
