// DNS rebinding: a page whose name the attacker points at 127.0.0.1 makes the victim's browser send
// `Host: attacker.example:PORT` and `Origin: http://attacker.example:PORT` to a node on loopback.
// Only configured hosts and origins are served (the loopback names by default when bound to
// loopback); a foreign Origin is refused whatever the binding; both with 403 before any route.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';
import { metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'browser', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, _meta: META } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'slow_compute' };

/** One request with exactly these headers (fetch may not set Host). */
function send(node: DemoProcess, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const url = new URL(node.base);
  return within(
    new Promise((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    }),
    20_000,
    `${method} ${path}`,
  );
}

describe('DNS rebinding on demo nodes', { timeout: 120_000 }, () => {
  let loopback: DemoProcess;
  let configured: DemoProcess;
  before(async () => {
    // One after the other: two nodes compiling at once on a busy machine can miss the start bound.
    loopback = await spawnDemoNode('rebinding-default', { DATABASE_URL: '' });
    configured = await spawnDemoNode('rebinding-configured', { DATABASE_URL: '', MCP_TASKS_ALLOWED_HOSTS: 'mcp.example, localhost', MCP_TASKS_ALLOWED_ORIGINS: 'https://app.example' });
  });
  after(async () => {
    for (const node of [loopback, configured]) node?.child.kill('SIGTERM');
    await within(Promise.all([loopback?.exited ?? null, configured?.exited ?? null]), 15_000, 'the nodes to exit');
  });

  it('a rebound name is refused with 403 and creates no task on a default (no-auth, loopback) node', async () => {
    const port = new URL(loopback.base).port;
    const created = await metric(loopback.base, 'mcp_tasks_created_total');
    const reply = await send(loopback, 'POST', '/mcp', { ...MCP_HEADERS, host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` }, CALL);
    assert.equal(reply.status, 403, reply.text);
    assert.equal(JSON.parse(reply.text).error.code, -32000);
    assert.match(JSON.parse(reply.text).error.message, /Host header/);
    assert.doesNotMatch(reply.text, /attacker/);
    assert.equal(await metric(loopback.base, 'mcp_tasks_created_total'), created);
  });

  it('the refusal comes before any route: /healthz, /metrics and unknown paths too', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/console', '/nowhere']) {
      assert.equal((await send(loopback, 'GET', path, { host: 'attacker.example' })).status, 403, path);
    }
  });

  it('a foreign Origin with a loopback Host is refused; the loopback names and their origins are served', async () => {
    const port = new URL(loopback.base).port;
    const foreign = await send(loopback, 'POST', '/mcp', { ...MCP_HEADERS, host: `127.0.0.1:${port}`, origin: 'http://attacker.example' }, CALL);
    assert.equal(foreign.status, 403, foreign.text);
    assert.match(JSON.parse(foreign.text).error.message, /Origin header/);
    assert.equal((await send(loopback, 'POST', '/mcp', { ...MCP_HEADERS, host: `127.0.0.1:${port}`, origin: 'null' }, CALL)).status, 403, 'the opaque null origin');
    for (const [host, origin] of [
      [`127.0.0.1:${port}`, undefined],
      [`localhost:${port}`, `http://localhost:${port}`],
      [`[::1]:${port}`, undefined],
      [`127.0.0.1:${port}`, 'http://localhost:5173'],
    ] as const) {
      const reply = await send(loopback, 'POST', '/mcp', { ...MCP_HEADERS, host, ...(origin ? { origin } : {}) }, CALL);
      assert.equal(reply.status, 200, `${host} ${origin}: ${reply.text}`);
    }
  });

  it('MCP_TASKS_ALLOWED_HOSTS and MCP_TASKS_ALLOWED_ORIGINS replace the defaults', async () => {
    const served = await send(configured, 'POST', '/mcp', { ...MCP_HEADERS, host: 'MCP.example', origin: 'https://app.example' }, CALL);
    assert.equal(served.status, 200, served.text);
    assert.equal((await send(configured, 'POST', '/mcp', { ...MCP_HEADERS, host: 'mcp.example', origin: 'https://mcp.example' }, CALL)).status, 200, 'its own origin');
    assert.equal((await send(configured, 'POST', '/mcp', { ...MCP_HEADERS, host: 'mcp.example', origin: 'https://evil.example' }, CALL)).status, 403);
    assert.equal((await send(configured, 'POST', '/mcp', { ...MCP_HEADERS, host: '127.0.0.1' }, CALL)).status, 403, 'a name not listed');
  });
});

describe('DNS rebinding on a library host (McpTasks.handler)', { timeout: 30_000 }, () => {
  const tasks = new McpTasks({ rateLimit: false });
  const tools = [defineTool({ name: 'echo', task: 'optional', input: z.object({}), execute: async () => ({ content: [] }) })];
  const open = tasks.handler({ name: 'lib', version: '1.0.0', tools });
  const loopbackOnly = tasks.handler({ name: 'lib2', version: '1.0.0', tools, allowedHosts: ['localhost', '127.0.0.1'], allowedOrigins: ['https://app.example'] });
  after(async () => {
    await open.close();
    await loopbackOnly.close();
    await tasks.close();
  });
  const echo = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: META } });
  const request = (host: string, origin?: string) =>
    new Request(`http://${host}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-name': 'echo', host, ...(origin ? { origin } : {}) }, body: echo });

  it('by default a foreign Origin is refused with 403, on fetch and on the direct path; its own origin and no Origin are served', async () => {
    assert.equal((await open.fetch(request('mcp.example', 'http://attacker.example'))).status, 403);
    const headers: Record<string, string> = { ...MCP_HEADERS, 'mcp-name': 'echo', host: 'mcp.example', origin: 'http://attacker.example' };
    const direct = await open.serveDirect({ method: 'POST', header: (name) => headers[name], body: JSON.parse(echo), toRequest: () => request('mcp.example', 'http://attacker.example') });
    assert.equal(direct?.status, 403);
    assert.equal((await open.fetch(request('mcp.example', 'https://mcp.example'))).status, 200);
    assert.equal((await open.fetch(request('anything.example'))).status, 200, 'hosts: any by default');
  });

  it('allowedHosts and allowedOrigins bound what is served', async () => {
    assert.equal((await loopbackOnly.fetch(request('attacker.example'))).status, 403);
    assert.equal((await loopbackOnly.fetch(request('localhost:3000', 'https://app.example'))).status, 200);
    assert.equal((await loopbackOnly.fetch(request('localhost:3000', 'https://other.example'))).status, 403);
  });
});
