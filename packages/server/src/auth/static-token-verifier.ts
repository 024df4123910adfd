import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';

/** One entry of a static token table: what a bearer token stands for. */
export interface StaticToken {
  /** The token's subject: the person (or service) the task belongs to. */
  readonly sub: string;
  /** The OAuth client the token was issued to. */
  readonly clientId: string;
  /** The scopes the token grants. Default none. */
  readonly scopes?: readonly string[];
  /** The resource (RFC 8707) the token was issued for, an absolute URL. */
  readonly resource?: string;
  /** When the token expires, in seconds since the epoch. Default: never. */
  readonly expiresAt?: number;
  /** The issuer recorded in `authInfo.extra.iss`. Default `"static"`. */
  readonly iss?: string;
}

/** A bearer token table: token string to what it stands for. */
export type StaticTokenTable = Readonly<Record<string, StaticToken>>;

/**
 * A token verifier that looks tokens up in a fixed table (the SDK's `OAuthTokenVerifier` shape).
 * For development and tests: the table is the authority, and an unknown token is `invalid_token`.
 * A token without `expiresAt` never expires (it is reported as expiring in an hour, since the
 * SDK's bearer helpers refuse tokens without an expiry).
 */
export function staticTokenVerifier(table: StaticTokenTable): OAuthTokenVerifier {
  const tokens = new Map(Object.entries(parseStaticTokens(table)));
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const entry = tokens.get(token);
      if (!entry) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token');
      const info: AuthInfo = {
        token,
        clientId: entry.clientId,
        scopes: [...(entry.scopes ?? [])],
        expiresAt: entry.expiresAt ?? Math.floor(Date.now() / 1000) + 3600,
        extra: { sub: entry.sub, iss: entry.iss ?? 'static' },
      };
      if (entry.resource !== undefined) info.resource = new URL(entry.resource);
      return info;
    },
  };
}

/**
 * Checks a token table (for example the parsed `MCP_TASKS_TOKENS` file) and returns it typed.
 * Throws a `TypeError` naming the first bad entry.
 */
export function parseStaticTokens(value: unknown): Record<string, StaticToken> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('token table must be a JSON object mapping bearer tokens to { sub, clientId, scopes?, resource?, expiresAt? }');
  }
  const table: Record<string, StaticToken> = {};
  for (const [token, raw] of Object.entries(value as Record<string, unknown>)) {
    const where = `token table entry ${JSON.stringify(token.length > 8 ? `${token.slice(0, 4)}…` : token)}`;
    if (token === '' || /\s/.test(token)) throw new TypeError(`${where}: a token must be non-empty and contain no whitespace`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TypeError(`${where} must be an object`);
    const entry = raw as Record<string, unknown>;
    if (typeof entry['sub'] !== 'string' || entry['sub'] === '') throw new TypeError(`${where}: sub must be a non-empty string`);
    if (typeof entry['clientId'] !== 'string' || entry['clientId'] === '') throw new TypeError(`${where}: clientId must be a non-empty string`);
    const scopes = entry['scopes'] ?? [];
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string' && scope !== '' && !/\s/.test(scope))) {
      throw new TypeError(`${where}: scopes must be an array of scope strings without spaces`);
    }
    const resource = entry['resource'];
    if (resource !== undefined && (typeof resource !== 'string' || !URL.canParse(resource))) throw new TypeError(`${where}: resource must be an absolute URL`);
    const expiresAt = entry['expiresAt'];
    if (expiresAt !== undefined && (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt))) {
      throw new TypeError(`${where}: expiresAt must be a number (seconds since the epoch)`);
    }
    const iss = entry['iss'];
    if (iss !== undefined && typeof iss !== 'string') throw new TypeError(`${where}: iss must be a string`);
    table[token] = {
      sub: entry['sub'],
      clientId: entry['clientId'],
      scopes: scopes as string[],
      ...(resource === undefined ? {} : { resource: resource as string }),
      ...(expiresAt === undefined ? {} : { expiresAt: expiresAt as number }),
      ...(iss === undefined ? {} : { iss: iss as string }),
    };
  }
  return table;
}
