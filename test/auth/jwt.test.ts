// JWT access tokens checked against an issuer's JWKS served on loopback by the test; and the
// host scope that owns tasks when the endpoint has no authorization.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { jwtTokenVerifier, McpTasks } from '@mcp-tasks/server';
import { createMcpHandler, McpServer, OAuthError } from '@modelcontextprotocol/server';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { authRpc } from '../support/auth-client.js';
import { envelope } from '../support/server-raw-client.js';
import { taskTools } from '@mcp-tasks/demo';
import { bodyMessages } from '../support/sse.js';

const ORIGIN = 'https://mcp.example.test';
const RESOURCE = `${ORIGIN}/mcp`;
let issuer: string;
let jwks: Server;
type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let privateKey: SigningKey;
let strangerKey: SigningKey;
let demo: DemoServer;

before(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
  demo = await startDemoServer({
    port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'jwt', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined,
    auth: authFromEnv({ MCP_TASKS_JWT_ISSUER: issuer, MCP_TASKS_JWKS_URL: `${issuer}/jwks.json`, MCP_TASKS_PUBLIC_URL: ORIGIN }),
  });
});
after(async () => {
  await demo?.close(1_000);
  await new Promise((resolve) => jwks?.close(resolve));
});

interface Claims { iss?: string; aud?: string | string[]; sub?: string; client_id?: string; azp?: string; scope?: string; scp?: string[]; exp?: number; nbf?: number }
async function token(overrides: Claims = {}, key: SigningKey = privateKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Claims = { iss: issuer, aud: RESOURCE, sub: 'alice', client_id: 'app-a', scope: 'export read', exp: now + 300, ...overrides };
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' }).setIssuedAt().sign(key);
}

describe('jwtTokenVerifier', () => {
  const verifier = () => jwtTokenVerifier({ issuer, jwksUrl: `${issuer}/jwks.json`, resource: [RESOURCE, `${ORIGIN}/other/mcp`] });

  it('accepts a good token: subject, issuer, client, scopes, expiry and the resource it was issued for', async () => {
    const info = await verifier().verifyAccessToken(await token());
    assert.equal(info.clientId, 'app-a');
    assert.deepEqual(info.scopes, ['export', 'read']);
    assert.equal(info.resource?.href, RESOURCE);
    assert.deepEqual(info.extra, { sub: 'alice', iss: issuer });
    assert.ok(info.expiresAt! > Date.now() / 1000);
    const viaAzp = await verifier().verifyAccessToken(await token({ client_id: undefined, azp: 'app-z', scope: undefined, scp: ['a', 'b'], aud: [`${ORIGIN}/other/mcp`] }));
    assert.equal(viaAzp.clientId, 'app-z');
    assert.deepEqual(viaAzp.scopes, ['a', 'b']);
    assert.equal(viaAzp.resource?.href, `${ORIGIN}/other/mcp`);
  });

  const refusals: [string, () => Promise<string>][] = [
    ['a wrong issuer', () => token({ iss: 'https://evil.example' })],
    ['a wrong audience', () => token({ aud: 'https://elsewhere.example/mcp' })],
    ['an expired token', () => token({ exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['a token not valid yet (nbf)', () => token({ nbf: Math.floor(Date.now() / 1000) + 3600 })],
    ['a bad signature (another key, same kid)', () => token({}, strangerKey)],
    ['no client (client_id or azp)', () => token({ client_id: undefined })],
    ['no subject', () => token({ sub: undefined })],
    ['garbage', async () => 'not.a.jwt'],
  ];
  for (const [what, make] of refusals) {
    it(`refuses ${what} with invalid_token`, async () => {
      await assert.rejects(verifier().verifyAccessToken(await make()), (error: unknown) => error instanceof OAuthError && error.code === 'invalid_token');
    });
  }
});

describe('the demo with JWT access tokens', () => {
  it('serves a good token; 401 for expired, foreign-audience and badly signed tokens', async () => {
    const good = await authRpc(demo.url, await token(), 'tools/call', { name: 'export', arguments: { project: 'p', files: 1, delayMs: 0 } });
    assert.equal(good.result?.['resultType'], 'task');
    const taskId = good.result!['taskId'] as string;
    assert.ok((await authRpc(demo.url, await token(), 'tasks/get', { taskId })).result);
    for (const bad of [await token({ exp: 1 }), await token({ aud: `${ORIGIN}/other/mcp` }), await token({}, strangerKey)]) {
      const reply = await authRpc(demo.url, bad, 'tasks/get', { taskId });
      assert.equal(reply.status, 401);
      assert.match(reply.challenge ?? '', /error="invalid_token".*resource_metadata="https:\/\/mcp\.example\.test\/\.well-known\/oauth-protected-resource\/mcp"/);
    }
    const doc = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', demo.url))).json()) as Record<string, unknown>;
    assert.deepEqual(doc['authorization_servers'], [issuer]);
    assert.equal(doc['resource'], RESOURCE);
  });

  it('a token without the scope is refused with 403 insufficient_scope', async () => {
    const reply = await authRpc(demo.url, await token({ scope: 'read' }), 'tools/call', { name: 'export', arguments: { project: 'p' } });
    assert.equal(reply.status, 403);
    assert.match(reply.challenge ?? '', /error="insufficient_scope".*scope="export"/);
  });
});

describe('the host scope (no authorization)', () => {
  async function call(handler: ReturnType<typeof createMcpHandler>, host: string, method: string, params: Record<string, unknown>) {
    const body = { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(true) } };
    const headers: Record<string, string> = {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': String(params['name']) } : { 'mcp-name': String(params['taskId']) }),
    };
    const response = await handler.fetch(new Request(`http://${host}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) }), { parsedBody: body });
    return bodyMessages(await response.text())[0] as { result?: Record<string, any>; error?: { code: number; message: string } };
  }
  function serve(tasks: McpTasks) {
    return createMcpHandler((context) => {
      const server = new McpServer({ name: 'host-scope-test', version: '1' });
      tasks.register(server, taskTools, context);
      return server;
    });
  }

  it('by default is one constant: a task made through one Host is found through any other', async () => {
    const tasks = new McpTasks({ pollIntervalMs: 50 });
    const handler = serve(tasks);
    const created = await call(handler, 'a.example', 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    const taskId = created.result!['taskId'] as string;
    assert.ok((await call(handler, 'b.example', 'tasks/get', { taskId })).result, 'found through another Host');
    await handler.close();
    await tasks.close();
  });

  it('can be a function of the request (one tenant per virtual host): another host\'s task does not exist', async () => {
    const tasks = new McpTasks({ pollIntervalMs: 50, hostScope: (request) => new URL(request!.url).hostname });
    const handler = serve(tasks);
    const created = await call(handler, 'tenant-a.example', 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    const taskId = created.result!['taskId'] as string;
    assert.ok((await call(handler, 'tenant-a.example', 'tasks/get', { taskId })).result);
    const foreign = await call(handler, 'tenant-b.example', 'tasks/get', { taskId });
    const unknown = await call(handler, 'tenant-b.example', 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal(foreign.error?.code, -32602);
    assert.deepEqual(foreign.error, unknown.error);
    await handler.close();
    await tasks.close();
  });
});
