import { createHmac, randomBytes } from 'node:crypto';
import { equal } from './session-cookie.js';

/** The cookie that ties a sign-in form to the browser it was served to. */
export const LOGIN_COOKIE = 'mcp_tasks_console_login';
/** The form field that carries the form's token. */
export const LOGIN_CSRF_FIELD = 'csrf';
const FORM_LIFETIME_SECONDS = 3_600;

/**
 * Login CSRF: without it, another site could post its own token to `/console/login` and sign the
 * operator's browser in as someone else. Each form served carries a token that is a MAC of a
 * random nonce the same response sets as a cookie (SameSite=Strict, so another site's POST does
 * not carry it); a sign-in POST needs both to match. The key is derived from the console token,
 * so a form served by one node signs in on any. `GET /console?token=T` needs no form token: a
 * link can only sign in with the console's own credential, which the attacker does not have.
 */
export class LoginCsrf {
  readonly #key: Buffer;
  readonly #secure: boolean;

  constructor(consoleToken: string, secureCookie: boolean) {
    this.#key = createHmac('sha256', consoleToken).update('mcp-tasks console login csrf v1').digest();
    this.#secure = secureCookie;
  }

  /** A new form's token, and the cookie to set with it. */
  issue(): { token: string; cookie: string } {
    const nonce = randomBytes(18).toString('base64url');
    return { token: this.#mac(nonce), cookie: `${LOGIN_COOKIE}=${nonce}; Path=/console/login; HttpOnly; SameSite=Strict; Max-Age=${FORM_LIFETIME_SECONDS}${this.#secure ? '; Secure' : ''}` };
  }

  /** Whether a sign-in POST carries the token of the form served with its cookie. */
  allows(cookieNonce: string | undefined, formToken: string | null): boolean {
    if (cookieNonce === undefined || formToken === null || cookieNonce.length > 64) return false;
    return equal(formToken, this.#mac(cookieNonce));
  }

  #mac(nonce: string): string {
    return createHmac('sha256', this.#key).update(nonce).digest('base64url');
  }
}
