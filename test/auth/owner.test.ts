// Tasks are bound to their owner (subject, server, OAuth client, resource) and need their tool's
// scopes: over real HTTP, against two in-process demo nodes and one separate node process on one
// PostgreSQL database, with the demo's static token table (MCP_TASKS_TOKENS).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { authRpc, postWith } from '../support/auth-client.js';
import { listen } from '../support/notifications-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const TOKENS = {
  alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  'alice-noscope': { sub: 'alice', clientId: 'app-a', scopes: [], resource: RESOURCE },
  'alice-app-b': { sub: 'alice', clientId: 'app-b', scopes: ['export'], resource: RESOURCE },
  'alice-other-resource': { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: 'https://elsewhere.example.test/mcp' },
  bob: { sub: 'bob', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  'bob-noscope': { sub: 'bob', clientId: 'app-a', scopes: [], resource: RESOURCE },
  'carol-a': { sub: 'carol', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  'carol-b': { sub: 'carol', clientId: 'app-b', scopes: ['export'], resource: RESOURCE },
  expired: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE, expiresAt: 1_000_000 },
};
const MAX_PER_PRINCIPAL = 3;

let db: TestDatabase;
let nodeA: DemoServer;
let nodeB: DemoServer;
let child: ChildProcess;
let urlC: string;
const urls = () => [nodeA.url, nodeB.url, urlC];

before(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-auth-'));
  const tokensFile = path.join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(TOKENS));
  const env = { MCP_TASKS_TOKENS: tokensFile };
  const config = (nodeId: string) => ({
    port: 0, host: '127.0.0.1', databaseUrl: db.url, nodeId, pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: MAX_PER_PRINCIPAL, auth: authFromEnv(env),
  });
  nodeA = await startDemoServer(config('node-a'));
  nodeB = await startDemoServer(config('node-b'));
  child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/node/main.ts'], {
    env: { ...process.env, ...env, PORT: '0', DATABASE_URL: db.url, NODE_ID: 'node-c', MCP_TASKS_POLL_INTERVAL_MS: '50', MCP_TASKS_MAX_PER_PRINCIPAL: String(MAX_PER_PRINCIPAL) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  urlC = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`node process exited with ${code}: ${out}`)));
  });
});

after(async () => {
  child?.kill('SIGTERM');
  await Promise.all([nodeA?.close(1_000), nodeB?.close(1_000)]);
  if (child && child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  await db?.drop();
});

/** A long export owned by `token`'s owner, created on `url`. */
async function longExport(url: string, token: string): Promise<string> {
  const created = await authRpc(url, token, 'tools/call', { name: 'export', arguments: { project: 'p', files: 1000, delayMs: 60_000 } });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return created.result!['taskId'] as string;
}

const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAAAA';
const METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
const paramsFor = (method: string, taskId: string) => (method === 'tasks/update' ? { taskId, inputResponses: {} } : { taskId });

describe('the owner of a task', () => {
  it('sees it from every node: in-process nodes and a separate node process', async () => {
    const taskId = await longExport(nodeA.url, 'alice');
    for (const url of urls()) {
      const reply = await authRpc(url, 'alice', 'tasks/get', { taskId });
      assert.equal(reply.result?.['status'], 'working', url);
    }
    await authRpc(urlC, 'alice', 'tasks/cancel', { taskId });
    assert.equal((await authRpc(nodeB.url, 'alice', 'tasks/get', { taskId })).result?.['status'], 'cancelled');
  });

  const changes: [string, string, (urls: { main: string; other: string }) => string][] = [
    ['subject', 'bob', ({ main }) => main],
    ['OAuth client', 'alice-app-b', ({ main }) => main],
    ['resource', 'alice-other-resource', ({ main }) => main],
    ['server', 'alice', ({ other }) => other],
  ];
  for (const [part, token, at] of changes) {
    it(`hides it when only the ${part} differs: the identical error an unknown id gets, on every node and method`, async () => {
      const taskId = await longExport(nodeB.url, 'alice');
      for (const node of [nodeA, nodeB]) {
        const url = at({ main: node.url, other: node.otherUrl });
        for (const method of METHODS) {
          const unknown = await authRpc(url, token, method, paramsFor(method, UNKNOWN_ID));
          assert.equal(unknown.error?.code, -32602);
          const foreign = await authRpc(url, token, method, paramsFor(method, taskId));
          assert.equal(foreign.status, unknown.status, `${part} ${method}`);
          assert.deepEqual(foreign.error, unknown.error, `${part} ${method}`);
          assert.doesNotMatch(JSON.stringify(foreign.body), /alice|export|scope|exists|another|owner/i);
        }
      }
      const ownerCall = urls()[2]!;
      const still = await authRpc(ownerCall, 'alice', 'tasks/get', { taskId });
      assert.equal(still.result?.['status'], 'working', 'nobody else could cancel it');
      await authRpc(ownerCall, 'alice', 'tasks/cancel', { taskId });
    });
  }

  it('the same subject through the other server cannot see tasks from /mcp, and vice versa', async () => {
    const onOther = await authRpc(nodeA.otherUrl, 'alice', 'tools/call', { name: 'export', arguments: { project: 'p', files: 1000, delayMs: 60_000 } });
    const taskId = onOther.result!['taskId'] as string;
    assert.equal((await authRpc(nodeB.otherUrl, 'alice', 'tasks/get', { taskId })).result?.['status'], 'working');
    const fromMain = await authRpc(nodeB.url, 'alice', 'tasks/get', { taskId });
    assert.deepEqual(fromMain.error, (await authRpc(nodeB.url, 'alice', 'tasks/get', { taskId: UNKNOWN_ID })).error);
    await authRpc(nodeB.otherUrl, 'alice', 'tasks/cancel', { taskId });
  });
});

describe('scopes', () => {
  const expectScopeChallenge = (reply: { status: number; challenge: string | null }, what: string) => {
    assert.equal(reply.status, 403, what);
    assert.match(reply.challenge ?? '', /^Bearer /, what);
    assert.match(reply.challenge ?? '', /error="insufficient_scope"/, what);
    assert.match(reply.challenge ?? '', /scope="export"/, what);
    assert.match(reply.challenge ?? '', /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/, what);
  };

  it('a token without the tool\'s scope is refused with 403 insufficient_scope before any task exists', async () => {
    const reply = await authRpc(nodeA.url, 'alice-noscope', 'tools/call', { name: 'export', arguments: { project: 'p' } });
    expectScopeChallenge(reply, 'tools/call');
    // A tool without scopes works with the same token.
    const greet = await authRpc(nodeA.url, 'alice-noscope', 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    assert.equal(greet.status, 200);
  });

  it('the owner with a token without the task\'s scopes is refused on every task method, on every node', async () => {
    const taskId = await longExport(nodeA.url, 'alice');
    for (const url of urls()) {
      for (const method of METHODS) expectScopeChallenge(await authRpc(url, 'alice-noscope', method, paramsFor(method, taskId)), `${url} ${method}`);
    }
    assert.equal((await authRpc(nodeB.url, 'alice', 'tasks/get', { taskId })).result?.['status'], 'working', 'the refused cancel changed nothing');
    await authRpc(nodeB.url, 'alice', 'tasks/cancel', { taskId });
  });

  it('the owner with a token without the task\'s scopes is refused a listen on it with 403 insufficient_scope, on every node', async () => {
    const taskId = await longExport(nodeA.url, 'alice');
    try {
      for (const url of urls()) {
        const refused = await listen(url, [taskId, UNKNOWN_ID], { token: 'alice-noscope' });
        expectScopeChallenge({ status: refused.status, challenge: refused.headers.get('www-authenticate') }, `${url} subscriptions/listen`);
      }
      // Another owner without the scope learns nothing: the task is just not followed.
      const foreign = await listen(nodeB.url, [taskId], { token: 'bob-noscope' });
      assert.equal(foreign.status, 200);
      await foreign.ended;
      const ack = foreign.messages().find((m) => m['method'] === 'notifications/subscriptions/acknowledged');
      assert.deepEqual(ack?.['params']['notifications'], { taskIds: [] });
    } finally {
      await authRpc(nodeB.url, 'alice', 'tasks/cancel', { taskId });
    }
  });

  it('only the owner learns that a task needs scopes: another caller without them gets not-found', async () => {
    const taskId = await longExport(nodeA.url, 'alice');
    for (const method of METHODS) {
      const foreign = await authRpc(nodeB.url, 'bob-noscope', method, paramsFor(method, taskId));
      const unknown = await authRpc(nodeB.url, 'bob-noscope', method, paramsFor(method, UNKNOWN_ID));
      assert.equal(foreign.status, 200);
      assert.equal(foreign.challenge, null);
      assert.deepEqual(foreign.error, unknown.error, method);
    }
    await authRpc(nodeB.url, 'alice', 'tasks/cancel', { taskId });
  });
});

describe('tokens', () => {
  it('missing, malformed, unknown and expired tokens get 401 with a Bearer challenge naming the resource metadata', async () => {
    const cases: [string, string | undefined, string | undefined][] = [
      ['missing', undefined, undefined],
      ['not bearer', undefined, 'Basic YWxpY2U6cHc='],
      ['empty bearer', undefined, 'Bearer '],
      ['unknown', 'no-such-token', undefined],
      ['expired', 'expired', undefined],
    ];
    for (const url of urls()) {
      for (const [what, token, authorization] of cases) {
        const reply = await authRpc(url, token, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, authorization);
        assert.equal(reply.status, 401, what);
        assert.match(reply.challenge ?? '', /^Bearer error="invalid_token"/, what);
        assert.match(reply.challenge ?? '', /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/, what);
      }
    }
    const other = await authRpc(nodeA.otherUrl, undefined, 'tasks/get', { taskId: UNKNOWN_ID });
    assert.equal(other.status, 401);
    assert.match(other.challenge ?? '', /oauth-protected-resource\/other\/mcp"/);
  });

  it('/healthz and /metrics need no token; the protected resource metadata is served for /mcp and /other/mcp', async () => {
    const base = new URL(nodeA.url).origin;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/metrics`)).status, 200);
    for (const [wellKnown, resource] of [
      ['/.well-known/oauth-protected-resource', '/mcp'],
      ['/.well-known/oauth-protected-resource/mcp', '/mcp'],
      ['/.well-known/oauth-protected-resource/other/mcp', '/other/mcp'],
    ] as const) {
      const res = await fetch(`${base}${wellKnown}`);
      assert.equal(res.status, 200, wellKnown);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.equal(doc['resource'], `${base}${resource}`);
      assert.deepEqual(doc['bearer_methods_supported'], ['header']);
      assert.deepEqual(doc['scopes_supported'], ['export']);
    }
  });
});

describe('quota per owner', () => {
  it('one client\'s live tasks never use up another client\'s quota (same subject)', async () => {
    const carolA: string[] = [];
    for (const url of urls()) carolA.push(await longExport(url, 'carol-a'));
    // Full: the optional export now runs inline (no task), on any node.
    const inline = await authRpc(nodeB.url, 'carol-a', 'tools/call', { name: 'export', arguments: { project: 'p', files: 0 } });
    assert.equal(inline.result?.['resultType'], 'complete');
    assert.equal(inline.result?.['taskId'], undefined);
    // The same person through another client still gets tasks.
    const carolB: string[] = [];
    for (const url of urls()) carolB.push(await longExport(url, 'carol-b'));
    for (const taskId of carolA) await authRpc(nodeA.url, 'carol-a', 'tasks/cancel', { taskId });
    for (const taskId of carolB) await authRpc(nodeA.url, 'carol-b', 'tasks/cancel', { taskId });
  });
});

describe('tasks/update inputResponses', () => {
  for (const [what, value] of [['null', null], ['a string', 'yes'], ['an array', [{ action: 'accept' }]], ['a number', 3]] as const) {
    it(`${what} is refused with -32602 saying so, and nothing is acknowledged`, async () => {
      const taskId = await longExport(nodeA.url, 'alice');
      const reply = await postWith(
        nodeB.url,
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/update', params: { taskId, inputResponses: value, _meta: (await import('../support/server-raw-client.js')).envelope(true) } }),
        { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/update', 'mcp-name': taskId, authorization: 'Bearer alice' },
      );
      assert.equal(reply.error?.code, -32602);
      assert.equal(reply.body.id, 7);
      assert.match(reply.error!.message, new RegExp(`inputResponses must be an object.*got ${what}`));
      assert.equal(reply.result, undefined);
      await authRpc(nodeB.url, 'alice', 'tasks/cancel', { taskId });
    });
  }
});
