// Signing in to the console with a JWT access token where the node checks JWTs (an issuer's JWKS
// served on loopback by the test): the `operator` scope is needed, and the session ends no later
// than the token does.
import { postConsoleSignIn } from '../support/console-sign-in.js';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { consoleFromEnv } from '../../packages/gateway/src/console/console-config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const ORIGIN = 'https://ops.example.test';
type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

describe('console sign-in with a JWT', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let jwks: Server;
  let issuer: string;
  let key: SigningKey;
  let demo: DemoServer;
  let base: string;

  async function jwt(scope: string, expiresInSeconds: number): Promise<string> {
    const exp = Math.floor(Date.now() / 1000) + expiresInSeconds;
    return new SignJWT({ iss: issuer, aud: `${ORIGIN}/mcp`, sub: 'olga', client_id: 'ops-app', scope, exp })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setIssuedAt()
      .sign(key);
  }
  const signIn = (token: string) => postConsoleSignIn(base, token);

  before(async () => {
    database = await createTestDatabase();
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
    const env = { MCP_TASKS_JWT_ISSUER: issuer, MCP_TASKS_JWKS_URL: `${issuer}/jwks.json`, MCP_TASKS_PUBLIC_URL: ORIGIN, MCP_TASKS_CONSOLE_TOKEN: 'console-token-of-the-jwt-test' };
    demo = await startDemoServer({
      port: 0, host: '127.0.0.1', databaseUrl: database.url, nodeId: 'console-jwt', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined,
      auth: authFromEnv(env),
      console: consoleFromEnv(env),
    });
    base = demo.url.replace(/\/mcp$/, '');
  });
  after(async () => {
    await demo?.close(1_000);
    await new Promise((resolve) => jwks?.close(resolve));
    await database?.drop();
  });

  it('takes a JWT with the operator scope, as its subject, for no longer than the token lives', async () => {
    const response = await signIn(await jwt('operator', 120));
    assert.equal(response.status, 303);
    const header = response.headers.getSetCookie()[0]!;
    assert.match(header, /; Secure$/, 'the public URL is https');
    const maxAge = Number(/Max-Age=(\d+)/.exec(header)![1]);
    assert.ok(maxAge > 0 && maxAge <= 120, `Max-Age ${maxAge} is bounded by the token's expiry`);
    const session = await fetch(`${base}/console/api/session`, { headers: { cookie: header.split(';')[0]! } });
    assert.equal(((await session.json()) as { subject: string }).subject, 'olga');
  });

  it('refuses a JWT without the operator scope, and an expired one', async () => {
    assert.equal((await signIn(await jwt('export read', 120))).status, 401);
    assert.equal((await signIn(await jwt('operator', -60))).status, 401);
  });
});
