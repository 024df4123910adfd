// handler.node, the library's node:http listener: createServer(handler.node) serves the whole
// endpoint, answers the fast lane's requests without building a per-request McpServer, hands
// what that lane declines to the SDK exactly once, takes req.auth as the token, and bounds and
// checks the body before anything parses it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defineTool, McpTasks, type McpTasksHandler, type NodeRequest } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { closeLoopback, listenOnLoopback } from '../support/loopback-http.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const sum = defineTool({
  name: 'sum',
  task: 'optional',
  input: z.object({ values: z.array(z.number()) }),
  async execute({ values }) {
    return { content: [{ type: 'text', text: String(values.reduce((a, b) => a + b, 0)) }] };
  },
});

const ALICE: AuthInfo = { token: 'alice', clientId: 'app', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { sub: 'alice' } };

let tasks: McpTasks;
let handler: McpTasksHandler;
let http: Server;
let url: string;
let sdkServers = 0;

before(async () => {
  tasks = new McpTasks({ pollIntervalMs: 50 });
  handler = tasks.handler({
    name: 'node-listener',
    version: '1.0.0',
    tools: [sum],
    maxBodyBytes: 64 * 1024,
    // Called once for every request that reaches the SDK (its per-request McpServer).
    register: (server) => {
      sdkServers += 1;
      server.registerTool('greet', { inputSchema: z.object({ name: z.string() }) }, async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] }));
    },
  });
  http = createServer((req: NodeRequest, res) => {
    if (req.headers.authorization === 'Bearer alice') req.auth = ALICE;
    handler.node(req, res);
  });
  url = await listenOnLoopback(http);
});

after(async () => {
  await closeLoopback(http);
  await handler?.close();
  await tasks?.close();
});

describe('createServer(handler.node)', { timeout: 60_000 }, () => {
  it('serves a task tool call and tasks/get on the fast lane, without the SDK', async () => {
    const before = sdkServers;
    const created = await rpc(url, 'tools/call', { name: 'sum', arguments: { values: [1, 2, 3] } });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] === 'completed');
    assert.equal(done['result']['content'][0]['text'], '6');
    assert.equal(sdkServers, before, 'no request of these reached the SDK');
  });

  it('hands what the fast lane declines to the SDK once', async () => {
    const before = sdkServers;
    const greeted = await rpc(url, 'tools/call', { name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(greeted.result?.['content']?.[0]?.['text'], 'Hello, Ada!', JSON.stringify(greeted.body));
    assert.equal(sdkServers, before + 1);
  });

  it('takes req.auth as the verified token: a task is its owner\'s alone', async () => {
    const headers = (token?: string) => ({ ...(token ? { authorization: `Bearer ${token}` } : {}) });
    const created = await fetchRpc('tools/call', { name: 'sum', arguments: { values: [2] } }, headers('alice'));
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    const mine = await fetchRpc('tasks/get', { taskId: created.result.taskId }, headers('alice'));
    assert.equal(mine.result?.taskId, created.result.taskId);
    const anonymous = await fetchRpc('tasks/get', { taskId: created.result.taskId }, headers());
    assert.equal(anonymous.error?.code, -32602, JSON.stringify(anonymous));
  });

  it('answers a body past maxBodyBytes with 413 and closes the connection, and one nested too deep with -32700 before the parse', async () => {
    const large = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }) });
    assert.equal(large.status, 413);
    assert.equal(large.headers.get('connection'), 'close');
    assert.match(((await large.json()) as any).error.message, /larger than 65536 bytes/);
    const deep = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '['.repeat(200) + ']'.repeat(200) });
    assert.equal(deep.status, 400);
    assert.equal(((await deep.json()) as any).error.code, -32700);
  });

  it('answers a malformed Host header with 400 before anything else', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'GET', headers: { host: 'bad host/x' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 400);
  });
});

async function fetchRpc(method: string, params: Record<string, unknown>, extra: Record<string, string>): Promise<any> {
  const { requestBody, requestHeaders } = await import('../support/server-raw-client.js');
  const res = await fetch(url, { method: 'POST', headers: { ...requestHeaders(method, params), ...extra }, body: requestBody(method, params, true) });
  return res.json();
}
