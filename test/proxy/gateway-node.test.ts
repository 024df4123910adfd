// One gateway node (a real PostgreSQL store) in front of a scripted upstream: what it lists and
// sends upstream (the caller's trace context, its own credential), and an upstream that fails it
// (answers garbage, hangs, refuses its credential, loses its task, asks what cannot be relayed, is
// not there at all): each a clear JSON-RPC error naming the mounted upstream by name, within a
// bounded wait, with nothing left half-created on either side.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks, proxyUpstream, type TaskListenHandler } from '@mcp-tasks/server';
import pg from 'pg';
import { envelope, post, requestBody, requestHeaders, rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';
import { testPool } from '../support/pg-clients.js';

const TOOLS = ['garbage', 'hang', 'refuse', 'vanish', 'html', 'meta', 'ask', 'shadowed', 'paced'].map((name) => ({ name, inputSchema: { type: 'object', properties: {} } }));

/** An upstream scripted per tool: what each of its tools/call answers. */
async function startScriptedUpstream(): Promise<{ url: string; cancels: string[]; pacedPolls: number[]; hangLists(on: boolean): void; heldLists(): number; close(): Promise<void> }> {
  const cancels: string[] = [];
  const pacedPolls: number[] = [];
  const hanging = new Set<ServerResponse>();
  const heldLists = new Set<ServerResponse>();
  let hangLists = false;
  const json = (res: ServerResponse, id: unknown, body: Record<string, unknown>) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const message = JSON.parse(raw) as { id: unknown; method: string; params: Record<string, any> };
      const { id, method, params } = message;
      if (method === 'tools/list' && hangLists) {
        heldLists.add(res);
        res.on('close', () => heldLists.delete(res));
        return;
      }
      if (method === 'tools/list') return json(res, id, { result: { tools: TOOLS } });
      if (method === 'tasks/get' && params['taskId'] === 'up-asking') {
        const now = new Date().toISOString();
        const inputRequests = { odd: { method: 'bogus/method', params: {} } };
        return json(res, id, { result: { resultType: 'complete', taskId: 'up-asking', status: 'input_required', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 50, inputRequests } });
      }
      if (method === 'tasks/get' && params['taskId'] === 'up-paced') {
        pacedPolls.push(Date.now());
        const now = new Date().toISOString();
        const done = pacedPolls.length >= 3;
        return json(res, id, {
          result: { resultType: 'complete', taskId: 'up-paced', status: done ? 'completed' : 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 400, ...(done ? { result: { content: [{ type: 'text', text: 'paced' }] } } : {}) },
        });
      }
      if (method === 'tasks/get') return json(res, id, { error: { code: -32602, message: 'Task not found' } });
      if (method === 'tasks/cancel') {
        cancels.push(params['taskId']);
        return json(res, id, { result: {} });
      }
      switch (params['name']) {
        case 'meta':
          return json(res, id, { result: { content: [{ type: 'text', text: JSON.stringify({ traceparent: params['_meta']?.['traceparent'] ?? null, authorization: req.headers.authorization ?? null }) }] } });
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"this is": "not JSON-RPC"');
        case 'hang':
          hanging.add(res);
          return;
        case 'refuse':
          res.writeHead(401, { 'www-authenticate': 'Bearer' });
          return res.end();
        case 'html':
          res.writeHead(502, { 'content-type': 'text/html' });
          return res.end('<html>bad gateway</html>');
        case 'vanish':
        case 'paced':
        case 'ask': {
          const now = new Date().toISOString();
          const taskId = params['name'] === 'ask' ? 'up-asking' : params['name'] === 'paced' ? 'up-paced' : 'up-vanishing';
          return json(res, id, { result: { resultType: 'task', taskId, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 1000, pollIntervalMs: 50 } });
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    cancels,
    pacedPolls,
    hangLists: (on) => (hangLists = on),
    heldLists: () => heldLists.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of [...hanging, ...heldLists]) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let db: TestDatabase;
let admin: pg.Pool;
let tasks: McpTasks;
let handler: TaskListenHandler;
let http: Server;
let url: string;
let upstream: Awaited<ReturnType<typeof startScriptedUpstream>>;

before(async () => {
  db = await createTestDatabase();
  admin = testPool({ connectionString: db.url, max: 1 });
  upstream = await startScriptedUpstream();
  const store = await PostgresTaskStore.connect({ connectionString: db.url });
  const node = await PostgresTaskNode.start(store, { nodeId: 'gateway-node' });
  tasks = new McpTasks({ store, node, pollIntervalMs: 100 });
  // A gateway with one ordinary tool of its own (named like an upstream tool): one scripted
  // upstream, and one that is not there.
  handler = tasks.handler({
    name: 'gateway',
    version: '1.0.0',
    register: (server) => {
      server.registerTool('flaky_shadowed', { description: 'the gateway own' }, async () => ({ content: [{ type: 'text', text: 'served by the gateway' }] }));
    },
    upstreams: [proxyUpstream({ name: 'flaky', url: upstream.url, token: 'gateway-credential', timeoutMs: 3_000 }), proxyUpstream({ name: 'absent', url: 'http://127.0.0.1:9/mcp', timeoutMs: 500 })],
  });
  ({ http, url } = await serveOnLoopback(handler));
});

after(async () => {
  await closeLoopback(http);
  await handler?.close();
  await tasks?.close();
  await upstream?.close();
  await admin?.end();
  await db?.drop();
});

async function liveTasks(): Promise<number> {
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM mcp_tasks.tasks WHERE status IN ('working', 'input_required')`);
  return rows[0].n;
}

describe('what a gateway lists and sends upstream', { timeout: 60_000 }, () => {
  it('an upstream that cannot list its tools is left out of tools/list; the others are listed', async () => {
    const listed = await within(rpc(url, 'tools/list', {}), 10_000, 'tools/list');
    const names = (listed.result?.['tools'] as { name: string }[]).map((tool) => tool.name).sort();
    assert.deepEqual(names, ['flaky_ask', 'flaky_garbage', 'flaky_hang', 'flaky_html', 'flaky_meta', 'flaky_paced', 'flaky_refuse', 'flaky_shadowed', 'flaky_vanish']);
  });

  it('a stale tool list is served from the cache at once while the upstream is slow to list again', async () => {
    // A mount of its own whose list is always stale and whose upstream requests may take a minute.
    const stale = tasks.handler({ name: 'gateway-stale', version: '1.0.0', upstreams: [proxyUpstream({ name: 'stale', url: upstream.url, toolsTtlMs: 1, timeoutMs: 60_000 })] });
    const list = async (): Promise<string[]> => {
      const params = {};
      const body = requestBody('tools/list', params, false);
      const response = await stale.fetch(new Request('http://gateway.test/mcp', { method: 'POST', headers: requestHeaders('tools/list', params), body }), { parsedBody: JSON.parse(body) });
      const message = JSON.parse(await response.text()) as { result?: { tools?: { name: string }[] } };
      return (message.result?.tools ?? []).map((tool) => tool.name);
    };
    try {
      assert.ok((await within(list(), 10_000, 'the first listing')).includes('stale_meta'));
      upstream.hangLists(true);
      // Had the listing waited for the refetch it starts, it would wait for the upstream's minute.
      assert.ok((await within(list(), 10_000, 'a listing while the upstream holds the refetch')).includes('stale_meta'));
    } finally {
      upstream.hangLists(false);
      await stale.close();
    }
  });

  it('two upstreams that serve one name list it once, the first upstream\'s, which is the one a call reaches', async () => {
    // Both mounts serve the scripted upstream's tools under one name each: `same_<tool>`.
    const rename = (tool: string) => `same_${tool}`;
    const twice = tasks.handler({
      name: 'gateway-twice',
      version: '1.0.0',
      upstreams: [proxyUpstream({ name: 'first', url: upstream.url, rename, timeoutMs: 3_000 }), proxyUpstream({ name: 'second', url: upstream.url, rename, timeoutMs: 3_000 })],
    });
    try {
      const params = {};
      const body = requestBody('tools/list', params, false);
      const response = await within(twice.fetch(new Request('http://gateway.test/mcp', { method: 'POST', headers: requestHeaders('tools/list', params), body }), { parsedBody: JSON.parse(body) }), 10_000, 'tools/list');
      const names = ((JSON.parse(await response.text()) as { result?: { tools?: { name: string }[] } }).result?.tools ?? []).map((tool) => tool.name);
      assert.ok(names.includes('same_meta'), names.join(', '));
      assert.equal(names.length, new Set(names).size, `every name once: ${names.join(', ')}`);
    } finally {
      await twice.close();
    }
  });

  it("the host's own tool wins over an upstream tool of the same name, in tools/list and in tools/call", async () => {
    const listed = await within(rpc(url, 'tools/list', {}), 10_000, 'tools/list');
    const shadowed = (listed.result?.['tools'] as Record<string, any>[]).filter((tool) => tool['name'] === 'flaky_shadowed');
    assert.deepEqual(shadowed.map((tool) => tool['description']), ['the gateway own']);
    const called = await within(rpc(url, 'tools/call', { name: 'flaky_shadowed', arguments: {} }), 10_000, 'flaky_shadowed');
    assert.equal(called.result?.['content']?.[0]?.['text'], 'served by the gateway', JSON.stringify(called.body));
  });

  it("a proxied call carries the caller's trace context upstream in _meta", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const params = { name: 'flaky_meta', arguments: {} };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: { ...envelope(false), traceparent } } });
    const reply = await within(post(url, body, requestHeaders('tools/call', params)), 10_000, 'flaky_meta');
    const seen = JSON.parse(reply.result?.['content']?.[0]?.['text'] ?? '{}') as { traceparent?: string | null };
    assert.match(String(seen.traceparent), /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-0[01]$/, JSON.stringify(reply.body));
  });

  it("the upstream is called with the gateway's own credential, never the caller's", async () => {
    const params = { name: 'flaky_meta', arguments: {} };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { ...params, _meta: envelope(false) } });
    const reply = await within(post(url, body, { ...requestHeaders('tools/call', params), authorization: 'Bearer caller-token' }), 10_000, 'flaky_meta');
    const seen = JSON.parse(reply.result?.['content']?.[0]?.['text'] ?? '{}') as { authorization?: string | null };
    assert.equal(seen.authorization, 'Bearer gateway-credential', JSON.stringify(reply.body));
  });

});

describe('an upstream that fails the proxy', { timeout: 60_000 }, () => {
  for (const [tool, what] of [
    ['garbage', /^Upstream flaky: tools\/call answered HTTP 200 without a JSON-RPC response$/],
    ['hang', /^Upstream flaky: tools\/call did not answer within 3000 ms$/],
    ['refuse', /^Upstream flaky: tools\/call was refused \(HTTP 401\): the proxy's credentials for this upstream are not accepted$/],
    ['html', /^Upstream flaky: tools\/call answered HTTP 502 without a JSON-RPC response$/],
  ] as const) {
    for (const extension of [true, false]) {
      it(`an upstream tool that ${tool === 'hang' ? 'never answers' : `answers ${tool}`} is a clear -32603 naming the upstream, not its URL, with no task left (${extension ? 'with' : 'without'} the extension)`, async () => {
        const reply = await within(rpc(url, 'tools/call', { name: `flaky_${tool}`, arguments: {} }, { tasks: extension }), 10_000, `flaky_${tool}`);
        assert.equal(reply.error?.code, -32603, JSON.stringify(reply.body));
        assert.match(reply.error!.message, what);
        assert.doesNotMatch(JSON.stringify(reply.body), /127\.0\.0\.1/);
        assert.equal(await liveTasks(), 0, 'the reserved task was given up');
      });
    }
  }

  it('an upstream that makes a task of a call sent without the extension is refused clearly, and that task is cancelled upstream', async () => {
    const before = upstream.cancels.filter((id) => id === 'up-vanishing').length;
    const reply = await within(rpc(url, 'tools/call', { name: 'flaky_vanish', arguments: {} }, { tasks: false }), 10_000, 'flaky_vanish');
    assert.equal(reply.error?.code, -32603, JSON.stringify(reply.body));
    assert.equal(reply.error!.message, 'Upstream flaky: made a task of flaky_vanish that was not asked for');
    // The cancel is owed before the answer goes out, and delivered by the node's cancel service.
    await eventually(async () => upstream.cancels.filter((id) => id === 'up-vanishing').length === before + 1, 5_000, 'the upstream task was cancelled');
  });

  it("the relay polls the upstream task no faster than the upstream's pollIntervalMs", async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'flaky_paced', arguments: {} }), 10_000, 'flaky_paced');
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working', 10_000);
    assert.equal(done['result']?.['content']?.[0]?.['text'], 'paced', JSON.stringify(done));
    const polls = upstream.pacedPolls;
    assert.equal(polls.length, 3);
    // A timer never fires early, so the gaps are at least the interval however loaded the machine.
    for (let i = 1; i < polls.length; i += 1) assert.ok(polls[i]! - polls[i - 1]! >= 390, `polls ${polls[i]! - polls[i - 1]!} ms apart`);
  });

  it('an upstream task that disappears fails the proxy task with a clear error', async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'flaky_vanish', arguments: {} }), 10_000, 'flaky_vanish');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working', 10_000);
    assert.equal(done['status'], 'failed', JSON.stringify(done));
    assert.equal(done['error']['message'], 'Upstream flaky: its task up-vanishing expired or no longer exists');
  });

  it('an upstream task that asks for input the proxy cannot relay fails the proxy task clearly and is cancelled upstream', async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'flaky_ask', arguments: {} }), 10_000, 'flaky_ask');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working', 10_000);
    assert.equal(done['status'], 'failed', JSON.stringify(done));
    assert.equal(done['error']['message'], 'Upstream flaky: asked for input the proxy cannot relay (bogus/method)');
    await eventually(async () => upstream.cancels.includes('up-asking'), 5_000, 'the upstream task was cancelled');
  });

  it('a call to a tool of an upstream that cannot be reached is answered without the upstream URL', async () => {
    const reply = await within(rpc(url, 'tools/call', { name: 'absent_anything', arguments: {} }), 10_000, 'absent_anything');
    assert.ok(reply.error || reply.result?.['isError'], JSON.stringify(reply.body));
    assert.doesNotMatch(JSON.stringify(reply.body), /127\.0\.0\.1:9/);
  });
});
