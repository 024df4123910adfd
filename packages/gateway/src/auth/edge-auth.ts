import { defaultLogger, logSafe } from '@mcp-tasks/core';
import {
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  verifyBearerToken,
  type AuthInfo,
  type OAuthProtectedResourceMetadata,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';

/** Options of {@link createEdgeAuth}. */
export interface EdgeAuthOptions {
  readonly verifier: OAuthTokenVerifier;
  /** Issuers of the authorization servers clients get tokens from (RFC 9728 `authorization_servers`). */
  readonly authorizationServers: readonly string[];
  /**
   * The origin clients reach this node at (`https://mcp.example.com`); each MCP path's resource
   * identifier is this origin plus the path. Default: the origin of each request.
   */
  readonly publicOrigin?: string;
  /** Refuse tokens not issued for the MCP path's resource (RFC 8707 audience). */
  readonly requireResource: boolean;
  /** Scopes advertised as `scopes_supported`. */
  readonly scopesSupported?: readonly string[];
}

/**
 * What {@link EdgeAuth} reads of a request: a WHATWG `Request` is one, and a node:http edge passes
 * these three without building one for every request it serves.
 */
export interface EdgeAuthRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null };
}

/** The edge's authorization: the RFC 9728 documents and the bearer-token gate. */
export interface EdgeAuth {
  /** The protected resource metadata document for `url`, or undefined when `url` is not one. */
  metadata(request: EdgeAuthRequest, mcpPaths: readonly string[]): Response | undefined;
  /** The verified token of a request to the MCP path `mcpPath`, or the 401/403 to answer. */
  authenticate(request: EdgeAuthRequest, mcpPath: string): Promise<AuthInfo | Response>;
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * The HTTP edge as an OAuth resource server. Every MCP path is its own protected resource; its
 * metadata is served at `/.well-known/oauth-protected-resource<path>` (and the first path's also
 * at the bare `/.well-known/oauth-protected-resource`). A request without a valid, unexpired token
 * gets 401 with `WWW-Authenticate: Bearer …, resource_metadata="…"` (the SDK's bearer helpers).
 */
export function createEdgeAuth(options: EdgeAuthOptions): EdgeAuth {
  const resourceOf = (request: EdgeAuthRequest, path: string) => new URL(path, options.publicOrigin ?? new URL(request.url).origin);
  return {
    metadata(request, mcpPaths) {
      const path = new URL(request.url).pathname.replace(/\/$/, '');
      if (path !== WELL_KNOWN && !path.startsWith(`${WELL_KNOWN}/`)) return undefined;
      const mcpPath = path === WELL_KNOWN ? mcpPaths[0] : path.slice(WELL_KNOWN.length);
      if (mcpPath === undefined || !mcpPaths.includes(mcpPath)) return undefined;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return Response.json({ error: 'invalid_request', error_description: `${request.method} is not allowed` }, { status: 405, headers: { allow: 'GET, HEAD' } });
      }
      const document: OAuthProtectedResourceMetadata = {
        resource: resourceOf(request, mcpPath).href,
        authorization_servers: [...options.authorizationServers],
        bearer_methods_supported: ['header'],
        resource_name: 'mcp-tasks demo',
        ...(options.scopesSupported ? { scopes_supported: [...options.scopesSupported] } : {}),
      };
      return Response.json(document, { headers: { 'access-control-allow-origin': '*' } });
    },

    async authenticate(request, mcpPath) {
      const resource = resourceOf(request, mcpPath);
      const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
      try {
        return await verifyBearerToken(request.headers.get('authorization') ?? undefined, {
          verifier: options.verifier,
          resourceMetadataUrl,
          ...(options.requireResource ? { expectedResource: resource } : {}),
        });
      } catch (error) {
        if (!(error instanceof OAuthError)) defaultLogger().error({ err: logSafe(error) }, 'token verification failed');
        return bearerAuthChallengeResponse(error, { resourceMetadataUrl });
      }
    },
  };
}
