import { readFileSync } from 'node:fs';
import { jwtTokenVerifier, parseStaticTokens, staticTokenVerifier } from '@mcp-tasks/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';

/** How the demo checks bearer tokens (absent: no authorization, one constant host scope). */
export interface DemoAuthConfig {
  readonly verifier: OAuthTokenVerifier;
  /** RFC 9728 `authorization_servers` ([] for the static token table). */
  readonly authorizationServers: readonly string[];
  /** The origin clients use; default each request's own origin. */
  readonly publicOrigin?: string;
  /** Refuse tokens whose resource is not the MCP path's (true for JWTs). */
  readonly requireResource: boolean;
}

/** The MCP paths of the demo: `/mcp` (server `mcp-tasks-demo`) and `/other/mcp` (server `mcp-tasks-other`). */
export const DEMO_MCP_PATHS = ['/mcp', '/other/mcp'] as const;

/**
 * Authorization from the environment:
 * - `MCP_TASKS_TOKENS`: path of a JSON token table (development and tests);
 * - `MCP_TASKS_JWT_ISSUER`, `MCP_TASKS_JWKS_URL`, `MCP_TASKS_PUBLIC_URL`: JWT access tokens
 *   signed by that issuer; their `aud` must be `<MCP_TASKS_PUBLIC_URL>/mcp` (or `/other/mcp`).
 * Setting both is an error; setting neither turns authorization off.
 */
export function authFromEnv(env: NodeJS.ProcessEnv): DemoAuthConfig | undefined {
  const tokensPath = env['MCP_TASKS_TOKENS'] || undefined;
  const issuer = env['MCP_TASKS_JWT_ISSUER'] || undefined;
  const publicUrl = env['MCP_TASKS_PUBLIC_URL'] || undefined;
  const publicOrigin = publicUrl === undefined ? undefined : originOf(publicUrl);
  if (tokensPath && issuer) throw new Error('Set either MCP_TASKS_TOKENS or MCP_TASKS_JWT_ISSUER, not both');
  if (tokensPath) {
    let table: unknown;
    try {
      table = JSON.parse(readFileSync(tokensPath, 'utf8'));
    } catch (error) {
      throw new Error(`MCP_TASKS_TOKENS: cannot read ${tokensPath}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return {
      verifier: staticTokenVerifier(parseStaticTokens(table)),
      authorizationServers: [],
      requireResource: false,
      ...(publicOrigin === undefined ? {} : { publicOrigin }),
    };
  }
  if (issuer) {
    const jwksUrl = env['MCP_TASKS_JWKS_URL'];
    if (!jwksUrl) throw new Error('MCP_TASKS_JWT_ISSUER needs MCP_TASKS_JWKS_URL (the issuer\'s JWKS)');
    if (publicOrigin === undefined) throw new Error('MCP_TASKS_JWT_ISSUER needs MCP_TASKS_PUBLIC_URL (the origin clients use; tokens are issued for <origin>/mcp)');
    return {
      verifier: jwtTokenVerifier({ issuer, jwksUrl, resource: DEMO_MCP_PATHS.map((path) => new URL(path, publicOrigin)) }),
      authorizationServers: [issuer],
      publicOrigin,
      requireResource: true,
    };
  }
  return undefined;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    throw new Error(`MCP_TASKS_PUBLIC_URL must be an absolute URL, got ${JSON.stringify(url)}`);
  }
}
