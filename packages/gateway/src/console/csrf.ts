import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { equal, type ConsoleSession } from './session-cookie.js';

/** The header the console's page sends its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/**
 * CSRF tokens of console sessions: a MAC of the session's nonce under a key derived from the
 * console token. Only the console's own page can read it (from `GET /console/api/session`, which
 * needs the cookie and has no CORS), so a POST from another site carries the cookie (were
 * SameSite not enough) but never the token.
 */
export class CsrfGuard {
  readonly #key: Buffer;

  constructor(consoleToken: string) {
    this.#key = createHmac('sha256', consoleToken).update('mcp-tasks console csrf v1').digest();
  }

  tokenFor(session: ConsoleSession): string {
    return createHmac('sha256', this.#key).update(session.nonce).digest('base64url');
  }

  /**
   * Whether a state-changing request of `session` may go on: it carries the session's token, and
   * its Origin (when the browser sent one) names the host it was sent to. The host, not the
   * whole origin: behind a TLS-terminating proxy the node sees http where the browser says https.
   */
  allows(req: IncomingMessage, session: ConsoleSession, host: string): boolean {
    const sentOrigin = req.headers.origin;
    if (sentOrigin !== undefined && hostOf(sentOrigin) !== host) return false;
    const given = req.headers[CSRF_HEADER];
    return typeof given === 'string' && equal(given, this.tokenFor(session));
  }
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
