import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';

/** Options of {@link jwtTokenVerifier}. */
export interface JwtTokenVerifierOptions {
  /** The authorization server's issuer identifier; a token's `iss` must equal it. */
  readonly issuer: string;
  /**
   * The resource (RFC 8707) this server is, or several (one per MCP endpoint): a token's `aud`
   * must contain one of them, and that one becomes `authInfo.resource`.
   */
  readonly resource: string | URL | readonly (string | URL)[];
  /** Where the issuer publishes its signing keys (fetched and cached, refetched on an unknown `kid`). */
  readonly jwksUrl?: string | URL;
  /** The signing keys themselves, instead of `jwksUrl`. */
  readonly jwks?: JSONWebKeySet;
  /** Accepted signature algorithms. Default: the asymmetric ones (`RS*`, `PS*`, `ES*`, `EdDSA`). */
  readonly algorithms?: readonly string[];
  /** Clock skew tolerated on `exp` and `nbf`, in seconds. Default 30. */
  readonly clockToleranceSeconds?: number;
  /** Timeout of a JWKS fetch, in ms. Default 5000. */
  readonly jwksTimeoutMs?: number;
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * A token verifier for JWT access tokens (RFC 9068) signed by an authorization server whose keys
 * are published as a JWKS. It checks the signature, `iss`, `aud` (one of the resources), `exp`
 * and `nbf`, and requires `sub`, `exp` and a client (`client_id`, or `azp`). Scopes come from
 * `scope` (space separated) or `scp` (an array or a string). Any failure is `invalid_token`
 * (401); a JWKS that cannot be fetched is `server_error`.
 */
export function jwtTokenVerifier(options: JwtTokenVerifierOptions): OAuthTokenVerifier {
  if (typeof options.issuer !== 'string' || options.issuer === '') throw new TypeError('jwtTokenVerifier: issuer must be a non-empty string');
  if ((options.jwksUrl === undefined) === (options.jwks === undefined)) throw new TypeError('jwtTokenVerifier: give exactly one of jwksUrl and jwks');
  const resources = (Array.isArray(options.resource) ? options.resource : [options.resource]).map((r) => new URL(String(r)));
  if (resources.length === 0) throw new TypeError('jwtTokenVerifier: resource must name at least one resource');
  const keys = options.jwks
    ? createLocalJWKSet(options.jwks)
    : createRemoteJWKSet(new URL(String(options.jwksUrl)), { timeoutDuration: options.jwksTimeoutMs ?? 5000 });
  const verifyOptions = {
    issuer: options.issuer,
    algorithms: [...(options.algorithms ?? ASYMMETRIC)],
    clockTolerance: options.clockToleranceSeconds ?? 30,
    requiredClaims: ['sub', 'exp'],
  };

  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, verifyOptions));
      } catch (error) {
        throw toOAuthError(error);
      }
      const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp');
      if (clientId === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: it names no client (client_id or azp)');
      // The audience is compared here rather than by jose, ignoring a fragment and one trailing
      // slash as the SDK's expectedResource check does ("https://a.example" = "https://a.example/").
      const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
      const resource = resources.find((r) => audiences.some((aud) => comparable(aud) === comparable(r.href)));
      if (!resource) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: aud check failed (not issued for this resource)');
      return {
        token,
        clientId,
        scopes: scopesOf(payload),
        expiresAt: payload.exp!,
        resource: new URL(resource),
        extra: { sub: payload.sub!, iss: payload.iss! },
      };
    },
  };
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function scopesOf(payload: JWTPayload): string[] {
  const raw = payload['scope'] ?? payload['scp'];
  const list = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
  return list.filter((scope) => scope !== '');
}

function comparable(value: string): string {
  const hash = value.indexOf('#');
  return (hash === -1 ? value : value.slice(0, hash)).replace(/\/$/, '');
}

function toOAuthError(error: unknown): OAuthError {
  if (error instanceof errors.JWTExpired) return new OAuthError(OAuthErrorCode.InvalidToken, 'Token has expired');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError)) {
    return new OAuthError(OAuthErrorCode.ServerError, 'Could not fetch the authorization server keys');
  }
  if (error instanceof errors.JWTClaimValidationFailed) return new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${error.claim} check failed`);
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: signature verification failed');
  }
  return new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token');
}
