import { createHash, timingSafeEqual } from 'node:crypto';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';

/** The scope a bearer token needs to sign in to the console. */
export const OPERATOR_SCOPE = 'operator';
/** The subject of a sign-in with the console token itself. */
export const CONSOLE_TOKEN_SUBJECT = 'console-token';
/** A longer credential is refused unread: no hashing or verifying of megabytes. */
const MAX_CREDENTIAL_LENGTH = 8_192;

/** Who signed in, and until when their credential allows it (ms since the epoch). */
export interface Operator {
  readonly subject: string;
  readonly notAfter: number;
}

/**
 * The operator a credential stands for, or `undefined`: the console token (compared as SHA-256
 * digests in constant time, so neither its length nor a prefix leaks), else, when the node
 * checks bearer tokens, a token its verifier accepts that carries the `operator` scope.
 */
export async function signIn(credential: string, consoleToken: string, verifier: OAuthTokenVerifier | undefined): Promise<Operator | undefined> {
  if (credential === '' || credential.length > MAX_CREDENTIAL_LENGTH) return undefined;
  if (timingSafeEqual(digest(credential), digest(consoleToken))) return { subject: CONSOLE_TOKEN_SUBJECT, notAfter: Infinity };
  if (!verifier) return undefined;
  try {
    const info = await verifier.verifyAccessToken(credential);
    if (!info.scopes.includes(OPERATOR_SCOPE)) return undefined;
    if (info.expiresAt !== undefined && info.expiresAt * 1000 <= Date.now()) return undefined;
    const sub = info.extra?.['sub'];
    return { subject: typeof sub === 'string' && sub !== '' ? sub : info.clientId, notAfter: info.expiresAt === undefined ? Infinity : info.expiresAt * 1000 };
  } catch {
    return undefined;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
