import { lacksScopes } from './task-scopes.js';
import { bearerAuthChallengeResponse, getOAuthProtectedResourceMetadataUrl, OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';

/**
 * HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, exactly as the
 * SDK answers a scope challenge (same resource metadata URL), for requests the SDK does not
 * challenge itself: a listen's task ids are served in front of it.
 */
export function insufficientScopeResponse(scopes: readonly string[], authInfo: AuthInfo | undefined): Response {
  const resource = authInfo?.resource;
  const resourceMetadataUrl =
    authInfo?.resourceMetadataUrl ?? (resource?.protocol === 'https:' || resource?.protocol === 'http:' ? getOAuthProtectedResourceMetadataUrl(resource) : undefined);
  return bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InsufficientScope, `This task needs scope ${scopes.join(' ')}`), {
    requiredScopes: [...scopes],
    ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
  });
}

/** {@link insufficientScopeResponse} when the token lacks any of the task's `scopes`, else undefined (access granted). */
export function scopeRefusal(scopes: readonly string[], authInfo: AuthInfo | undefined): Response | undefined {
  return lacksScopes(scopes, authInfo) ? insufficientScopeResponse(scopes, authInfo) : undefined;
}
