// A listen stream ends when the token it was opened with expires: the demo's static token table
// (MCP_TASKS_TOKENS) gives the verifier each token's expiry, and the stream closes with the listen
// result, as a drain closes it, while a token without an expiry keeps its stream open.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { authRpc } from '../support/auth-client.js';
import { listen } from '../support/notifications-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bodyMessages } from '../support/sse.js';

const RESOURCE = 'https://mcp.example.test/mcp';
/** Enough for the node to start and the stream to open; the test then waits for the expiry. */
const EXPIRES_IN_S = 5;

describe('a listen stream and its token', () => {
  let db: TestDatabase;
  let node: DemoServer;
  let dir: string;
  let expiresAt: number;

  before(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-expiry-'));
    const tokensFile = path.join(dir, 'tokens.json');
    expiresAt = Math.floor(Date.now() / 1000) + EXPIRES_IN_S;
    writeFileSync(tokensFile, JSON.stringify({
      lasting: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
      brief: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE, expiresAt },
    }));
    node = await startDemoServer({
      port: 0, host: '127.0.0.1', databaseUrl: db.url, nodeId: 'expiry', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined,
      auth: authFromEnv({ MCP_TASKS_TOKENS: tokensFile, MCP_TASKS_PUBLIC_URL: RESOURCE }),
    });
  });

  after(async () => {
    await node?.close(1_000);
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends with the listen result when its token expires, while a lasting token\'s stream stays open', { timeout: 30_000 }, async () => {
    const created = await authRpc(node.url, 'lasting', 'tools/call', { name: 'export', arguments: { project: 'p', files: 1000, delayMs: 60_000 } });
    const taskId = created.result!['taskId'] as string;
    const brief = await listen(node.url, [taskId], { token: 'brief' });
    const lasting = await listen(node.url, [taskId], { token: 'lasting' });
    try {
      assert.equal(brief.status, 200, JSON.stringify(brief.json));
      await brief.until((m) => m.some((x) => x['method'] === 'notifications/tasks'), 5_000, 'the task\'s state');
      assert.ok(Date.now() < expiresAt * 1000, 'the stream opened before the token expired (raise EXPIRES_IN_S on a slow machine)');
      const ended = await Promise.race([brief.ended.then(() => Date.now()), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), expiresAt * 1000 - Date.now() + 4_000))]);
      assert.ok(ended !== undefined, 'the stream ended within 4 s of its token\'s expiry');
      assert.ok(ended >= expiresAt * 1000 - 50, `the stream ended ${expiresAt * 1000 - ended} ms before its token expired`);
      const last = brief.messages().at(-1)!;
      assert.equal(last['id'], brief.id, `the last message is the listen result: ${JSON.stringify(last)}`);
      assert.equal(last['result']?.['resultType'], 'complete');
      assert.equal(lasting.messages().some((m) => m['id'] === lasting.id), false, 'the lasting token\'s stream is still open');
      assert.equal((await authRpc(node.url, 'brief', 'tasks/get', { taskId })).status, 401, 'the token is expired for requests too');
    } finally {
      brief.abort();
      lasting.abort();
      await authRpc(node.url, 'lasting', 'tasks/cancel', { taskId });
    }
  });
});

describe('a 2025-11-25 tasks/result stream and its token', { timeout: 60_000 }, () => {
  let node: DemoServer;
  let dir: string;
  let expiresAt: number;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-expiry-legacy-'));
    const tokensFile = path.join(dir, 'tokens.json');
    expiresAt = Math.floor(Date.now() / 1000) + EXPIRES_IN_S;
    writeFileSync(tokensFile, JSON.stringify({
      lasting: { sub: 'bob', clientId: 'app-b', scopes: ['export'], resource: RESOURCE },
      brief: { sub: 'bob', clientId: 'app-b', scopes: ['export'], resource: RESOURCE, expiresAt },
    }));
    node = await startDemoServer({
      port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'expiry-legacy', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined,
      auth: authFromEnv({ MCP_TASKS_TOKENS: tokensFile, MCP_TASKS_PUBLIC_URL: RESOURCE }),
    });
  });

  after(async () => {
    await node?.close(1_000);
    rmSync(dir, { recursive: true, force: true });
  });

  const legacy = (token: string, method: string, params: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
      signal: signal ?? AbortSignal.timeout(20_000),
    });

  it('ends with a -32000 error when its token expires, and delivers nothing of the task after it', { timeout: 30_000 }, async () => {
    const created = await (await legacy('lasting', 'tools/call', { name: 'slow_compute', arguments: { seconds: EXPIRES_IN_S + 6 }, task: {} })).text();
    const taskId = (bodyMessages(created).at(-1) as { result: { task: { taskId: string } } }).result.task.taskId;
    const abort = new AbortController();
    try {
      const response = await legacy('brief', 'tasks/result', { taskId }, abort.signal);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      assert.ok(Date.now() < expiresAt * 1000, 'the stream opened before the token expired (raise EXPIRES_IN_S on a slow machine)');
      const text = response.text();
      const ended = await Promise.race([text.then(() => Date.now()), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), expiresAt * 1000 - Date.now() + 4_000))]);
      assert.ok(ended !== undefined, 'the stream ended within 4 s of its token\'s expiry (before the task finished)');
      assert.ok(ended >= expiresAt * 1000 - 50, `the stream ended ${expiresAt * 1000 - ended} ms before its token expired`);
      const messages = bodyMessages(await text);
      const last = messages.at(-1)!;
      assert.equal(last['id'], 7, JSON.stringify(last));
      assert.equal(last['error']?.['code'], -32000, JSON.stringify(last));
      assert.match(last['error']['message'], /token .* expired/);
      assert.equal(messages.some((m) => m['result'] !== undefined), false, 'no result went out on the expired stream');
    } finally {
      abort.abort();
      await (await legacy('lasting', 'tasks/cancel', { taskId })).text();
    }
  });
});
