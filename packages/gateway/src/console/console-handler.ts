import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClusterStats, PostgresOperator } from '@mcp-tasks/postgres';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { defaultLogger } from '@mcp-tasks/core';
import { readBody } from '@mcp-tasks/server';
import { serveConsoleApi } from './console-api.js';
import type { ConsoleConfig } from './console-config.js';
import { CsrfGuard } from './csrf.js';
import { signIn } from './login.js';
import { LoginLimiter } from './login-limiter.js';
import { LOGIN_COOKIE, LOGIN_CSRF_FIELD, LoginCsrf } from './login-csrf.js';
import { loginPage, type LoginProblem } from './login-page.js';
import { cookieValue, SESSION_COOKIE, SessionSigner } from './session-cookie.js';
import { loadStaticAssets, PUBLIC_ASSETS } from './static-assets.js';

/** What the console needs of the node. */
export interface ConsoleOptions {
  readonly config: ConsoleConfig;
  readonly operator: PostgresOperator;
  readonly stats: () => ClusterStats | undefined;
  /** The node's bearer-token verifier, when it has one: an `operator`-scoped token signs in too. */
  readonly verifier?: OAuthTokenVerifier | undefined;
  readonly limiter?: LoginLimiter;
  readonly log?: (line: string) => void;
}

/** Serves one request under `/console` (the edge routes them here). */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse, url: URL, host: string) => Promise<void>;

/** The page may load only what the node serves: no inline script, nothing from elsewhere, no framing. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // `/console?token=…` must not leak through a Referer to another site. Not `no-referrer`: under
  // it a browser sends `Origin: null` with the sign-in form's POST, which the edge's Origin check
  // (DNS rebinding) rightly refuses; same-origin keeps the page's own origin on its own requests.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

const MAX_LOGIN_BODY = 16 * 1024;

/**
 * The operator console at `/console`: a sign-in (form, or `?token=` once for scripts) that sets
 * an HttpOnly, SameSite=Strict session cookie; the page and its API need that cookie (pages
 * answer 401 with the form, the API 401 JSON); the cancel needs the session's CSRF token too.
 */
export function createConsole(options: ConsoleOptions): ConsoleHandler {
  const assets = loadStaticAssets();
  const signer = new SessionSigner(options.config.token);
  const csrf = new CsrfGuard(options.config.token);
  const loginCsrf = new LoginCsrf(options.config.token, options.config.secureCookie);
  const limiter = options.limiter ?? new LoginLimiter();
  const log = options.log ?? ((line: string) => defaultLogger().info({}, line));
  const api = { operator: options.operator, stats: options.stats, csrf, log };

  return async (req, res, url, host) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const path = url.pathname;
    const asset = path.startsWith('/console/static/') ? path.slice('/console/static/'.length) : undefined;
    if (asset !== undefined && PUBLIC_ASSETS.has(asset)) return serveAsset(req, res, asset);
    if (path === '/console/login') {
      if (req.method === 'POST') {
        const form = await loginForm(req);
        if (!loginCsrf.allows(cookieValue(req.headers.cookie, LOGIN_COOKIE), form?.get(LOGIN_CSRF_FIELD) ?? null)) return formPage(res, 403, 'stale-form');
        return login(req, res, form?.get('token') ?? undefined);
      }
      if (req.method === 'GET' || req.method === 'HEAD') return formPage(res, 200, undefined);
      return text(res, 405, 'Method not allowed', { allow: 'GET, HEAD, POST' });
    }
    const token = url.searchParams.get('token');
    if (path === '/console' && token !== null && (req.method === 'GET' || req.method === 'HEAD')) return login(req, res, token);
    const session = signer.verify(cookieValue(req.headers.cookie, SESSION_COOKIE));
    if (!session) {
      if (path.startsWith('/console/api/')) return json(res, 401, { error: 'not signed in: sign in at /console/login' });
      return formPage(res, 401, undefined);
    }
    if (path.startsWith('/console/api/')) return serveConsoleApi(api, req, res, url, session, host);
    if (path === '/console/logout') {
      if (req.method !== 'POST') return text(res, 405, 'Method not allowed', { allow: 'POST' });
      if (!csrf.allows(req, session, host)) return json(res, 403, { error: 'missing or wrong CSRF token' });
      res.setHeader('set-cookie', sessionCookie('', 0));
      return json(res, 200, { signedOut: true });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'Method not allowed', { allow: 'GET, HEAD' });
    if (path === '/console' || path === '/console/') return serveAsset(req, res, 'console.html');
    if (asset !== undefined && assets.has(asset)) return serveAsset(req, res, asset);
    return text(res, 404, 'Not found');
  };

  async function login(req: IncomingMessage, res: ServerResponse, credential: string | undefined): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const waitMs = limiter.retryAfterMs(address);
    if (waitMs > 0) return formPage(res, 429, 'rate-limited', { 'retry-after': String(Math.ceil(waitMs / 1000)) });
    const operator = credential === undefined ? undefined : await signIn(credential, options.config.token, options.verifier);
    if (!operator) {
      limiter.failed(address);
      return formPage(res, 401, 'refused');
    }
    limiter.succeeded(address);
    const expiresAt = Math.min(Date.now() + options.config.sessionMs, operator.notAfter);
    const { value } = signer.issue(operator.subject, expiresAt);
    res.setHeader('set-cookie', sessionCookie(value, Math.floor((expiresAt - Date.now()) / 1000)));
    // 303: the browser follows with a GET of the bare path, so the token leaves the address bar and history.
    res.writeHead(303, { location: '/console', 'content-type': 'text/plain' }).end('Signed in');
  }

  /** The sign-in form with a fresh CSRF token, and its cookie. */
  function formPage(res: ServerResponse, status: number, problem: LoginProblem, headers: Record<string, string> = {}): void {
    const { token, cookie } = loginCsrf.issue();
    res.setHeader('set-cookie', cookie);
    page(res, status, loginPage(problem, token), headers);
  }

  function sessionCookie(value: string, maxAgeSeconds: number): string {
    return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${options.config.secureCookie ? '; Secure' : ''}`;
  }

  function serveAsset(req: IncomingMessage, res: ServerResponse, name: string): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'Method not allowed', { allow: 'GET, HEAD' });
    const file = assets.get(name)!;
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.body.length) }).end(req.method === 'HEAD' ? undefined : file.body);
  }
}

/** The login form's fields (urlencoded), or undefined when the body is too large. */
async function loginForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const body = await readBody(req, MAX_LOGIN_BODY);
  return body === undefined ? undefined : new URLSearchParams(body);
}

function page(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(html)) }).end(html);
}

function text(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8' }).end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}
