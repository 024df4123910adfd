// The console's session cookies, login limit and settings, unit by unit: the parts whose
// failures a browser would not show (expiry, a cookie of another cluster, the window's reset).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consoleFromEnv } from '../../packages/gateway/src/console/console-config.js';
import { CsrfGuard } from '../../packages/gateway/src/console/csrf.js';
import { LoginLimiter } from '../../packages/gateway/src/console/login-limiter.js';
import { cookieValue, SessionSigner } from '../../packages/gateway/src/console/session-cookie.js';

const TOKEN = 'a-console-token-long-enough';

describe('console sessions', () => {
  it('are refused once expired, and by a cluster with another console token', () => {
    const signer = new SessionSigner(TOKEN);
    const now = Date.now();
    const { value, session } = signer.issue('console-token', now + 1_000);
    assert.deepEqual(signer.verify(value, now), session);
    assert.equal(signer.verify(value, now + 1_000), undefined, 'expired at its expiry');
    assert.equal(new SessionSigner(`${TOKEN}-other`).verify(value, now), undefined);
    assert.equal(signer.verify(`${value}.extra`, now), undefined);
    assert.equal(signer.verify('x'.repeat(2_000), now), undefined);
  });

  it('have CSRF tokens of their own, which change with the console token', () => {
    const signer = new SessionSigner(TOKEN);
    const one = signer.issue('a', Date.now() + 60_000).session;
    const two = signer.issue('a', Date.now() + 60_000).session;
    const guard = new CsrfGuard(TOKEN);
    assert.notEqual(guard.tokenFor(one), guard.tokenFor(two));
    assert.notEqual(guard.tokenFor(one), new CsrfGuard(`${TOKEN}-other`).tokenFor(one));
  });

  it('are read from the Cookie header by name', () => {
    assert.equal(cookieValue('a=1; mcp_tasks_console=abc.def; b=2', 'mcp_tasks_console'), 'abc.def');
    assert.equal(cookieValue('xmcp_tasks_console=abc', 'mcp_tasks_console'), undefined);
    assert.equal(cookieValue(undefined, 'mcp_tasks_console'), undefined);
  });
});

describe('the login limit', () => {
  it('blocks an address after its failures until the window ends, and forgets the oldest address past its bound', () => {
    const limiter = new LoginLimiter({ maxFailures: 2, windowMs: 1_000, maxAddresses: 2 });
    limiter.failed('a', 0);
    assert.equal(limiter.retryAfterMs('a', 10), 0);
    limiter.failed('a', 10);
    assert.equal(limiter.retryAfterMs('a', 20), 980);
    assert.equal(limiter.retryAfterMs('b', 20), 0, 'other addresses are not blocked');
    assert.equal(limiter.retryAfterMs('a', 1_000), 0, 'the window ended');
    limiter.failed('b', 2_000);
    limiter.failed('b', 2_000);
    limiter.failed('c', 2_000);
    limiter.failed('d', 2_000);
    assert.equal(limiter.retryAfterMs('b', 2_001), 0, 'the oldest address was forgotten');
  });
});

describe('the console settings', () => {
  it('are off without a token, refuse a short one, and mark cookies Secure behind an https public URL', () => {
    assert.equal(consoleFromEnv({}), undefined);
    assert.throws(() => consoleFromEnv({ MCP_TASKS_CONSOLE_TOKEN: 'short' }), /at least 16 characters/);
    assert.throws(() => consoleFromEnv({ MCP_TASKS_CONSOLE_TOKEN: TOKEN, MCP_TASKS_CONSOLE_SESSION_MS: 'soon' }), /MCP_TASKS_CONSOLE_SESSION_MS must be an integer/);
    assert.deepEqual(consoleFromEnv({ MCP_TASKS_CONSOLE_TOKEN: TOKEN, MCP_TASKS_PUBLIC_URL: 'https://ops.example' }), { token: TOKEN, sessionMs: 8 * 3_600_000, secureCookie: true });
    assert.equal(consoleFromEnv({ MCP_TASKS_CONSOLE_TOKEN: TOKEN })?.secureCookie, false);
  });
});
