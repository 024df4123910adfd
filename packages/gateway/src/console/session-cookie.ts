import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed-in operator, as the session cookie carries it. */
export interface ConsoleSession {
  /** Who signed in: `console-token`, or the subject of the operator's bearer token. */
  readonly subject: string;
  /** Milliseconds since the epoch after which the cookie is refused. */
  readonly expiresAt: number;
  /** Random per sign-in: the CSRF token is derived from it (csrf.ts). */
  readonly nonce: string;
}

export const SESSION_COOKIE = 'mcp_tasks_console';
/** A longer cookie is not one of ours; it is refused before any parsing. */
const MAX_COOKIE_LENGTH = 1_024;

/**
 * Sessions as cookies signed with a key derived from the console token (HMAC-SHA256), so every
 * node of the cluster accepts a session another node issued, and changing the token ends them
 * all. Nothing is stored: a session ends at its expiry (bounded by the configured lifetime and,
 * for a bearer-token sign-in, by that token's own expiry).
 */
export class SessionSigner {
  readonly #key: Buffer;

  constructor(consoleToken: string) {
    this.#key = createHmac('sha256', consoleToken).update('mcp-tasks console session v1').digest();
  }

  issue(subject: string, expiresAt: number): { session: ConsoleSession; value: string } {
    const session: ConsoleSession = { subject, expiresAt, nonce: randomBytes(18).toString('base64url') };
    const payload = Buffer.from(JSON.stringify(session)).toString('base64url');
    return { session, value: `${payload}.${this.#sign(payload)}` };
  }

  /** The session a cookie value stands for, or `undefined` (malformed, forged or expired). */
  verify(value: string | undefined, now = Date.now()): ConsoleSession | undefined {
    if (value === undefined || value.length > MAX_COOKIE_LENGTH) return undefined;
    const [payload, signature, extra] = value.split('.');
    if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
    if (!equal(signature, this.#sign(payload))) return undefined;
    let session: unknown;
    try {
      session = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (!isSession(session) || session.expiresAt <= now) return undefined;
    return session;
  }

  #sign(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest('base64url');
  }
}

/** Compares two strings in constant time (for equal lengths; a length says nothing secret here). */
export function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function isSession(value: unknown): value is ConsoleSession {
  if (typeof value !== 'object' || value === null) return false;
  const { subject, expiresAt, nonce } = value as Record<string, unknown>;
  return typeof subject === 'string' && typeof expiresAt === 'number' && typeof nonce === 'string';
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
