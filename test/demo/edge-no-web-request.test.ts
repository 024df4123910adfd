// On a demo node with bearer tokens, what the direct path serves (a tasks/get, a listen the rate
// limit refuses) goes from the socket to the answer without a WHATWG Request: the edge hands the
// authorization what it reads of the request, and the owner needs none.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';

const TOKENS = { alice: { sub: 'alice', clientId: 'app', scopes: [] }, bob: { sub: 'bob', clientId: 'app', scopes: [] } };
const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAA';

let db: TestDatabase;
let node: DemoServer;

before(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-edge-'));
  const tokensFile = path.join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(TOKENS));
  node = await startDemoServer({
    port: 0, host: '127.0.0.1', databaseUrl: db.url, nodeId: 'edge-node', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined,
    auth: authFromEnv({ MCP_TASKS_TOKENS: tokensFile }), rateLimit: { requestsPerSecond: 0.01, burst: 1 },
  });
});

after(async () => {
  await node?.close();
  await db?.drop();
});

/** One POST over node:http (fetch would build a Request of its own in this process). */
function post(token: string, method: string, params: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const body = requestBody(method, params, true);
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(node.url), { method: 'POST', headers: { ...requestHeaders(method, params), authorization: `Bearer ${token}` } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe('the demo edge on the direct path', { timeout: 60_000 }, () => {
  it('builds no WHATWG Request for a tasks/get or a refused listen', async () => {
    const listen = { notifications: { taskIds: [UNKNOWN] } };
    // Alice's one token: her next listen is refused.
    assert.equal((await within(post('alice', 'subscriptions/listen', listen), 10_000, 'the first listen')).status, 200);
    const Original = globalThis.Request;
    let built = 0;
    globalThis.Request = class extends Original {
      constructor(...args: ConstructorParameters<typeof Request>) {
        super(...args);
        built += 1;
      }
    };
    try {
      const refused = await within(post('alice', 'subscriptions/listen', listen), 10_000, 'the refused listen');
      const read = await within(post('bob', 'tasks/get', { taskId: UNKNOWN }), 10_000, 'the read');
      assert.equal(refused.status, 429, refused.body);
      assert.match(read.body, /"error"/);
    } finally {
      globalThis.Request = Original;
    }
    assert.equal(built, 0);
  });
});
