// The plain tools of a 2026-07-28 HTTP upstream (here the demo node's `greet`, an ordinary tool)
// run as tasks of the gateway, as a 2025-11-25 upstream's and a stdio upstream's do; its task
// tools keep the proxy's relay. A raw 2026-07-28 server (which also answers a 2025-11-25 listing)
// shows the input_required rounds and the cancel.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Logger } from '@mcp-tasks/core';
import { configFromEnv, startGatewayNode, type GatewayNode } from '@mcp-tasks/gateway';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { closeLoopback, listenOnLoopback } from '../support/loopback-http.js';
import { legacyRpc } from '../support/legacy-client.js';

const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
let upstream: DemoProcess | undefined;
let node: GatewayNode | undefined;
let raw: Server | undefined;
/** What reached the raw server: each tools/call round's inputResponses, and the calls whose connection ended unanswered. */
const rounds: unknown[] = [];
let dropped = 0;

/** A 2026-07-28 server written by hand: `ask` asks a name on the request (input_required, requestState), `wait` never answers. */
function rawServer(): Server {
  return createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string; params?: Record<string, any> };
      const answer = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'initialize') return answer({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw-2026', version: '1.0.0' } });
      if (message.method === 'tools/list') return answer({ tools: [{ name: 'ask', inputSchema: { type: 'object' } }, { name: 'wait', inputSchema: { type: 'object' } }] });
      if (message.method === 'tools/call' && message.params?.['name'] === 'ask') {
        const responses = message.params['inputResponses'] as Record<string, { content?: { name?: string } }> | undefined;
        rounds.push({ inputResponses: responses, requestState: message.params['requestState'] });
        if (!responses) return answer({ resultType: 'input_required', inputRequests: { who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } } }, requestState: 'round-1' });
        return answer({ content: [{ type: 'text', text: `Hello, ${responses['who']?.content?.name}! (${String(message.params['requestState'])})` }] });
      }
      if (message.method === 'tools/call' && message.params?.['name'] === 'wait') return void res.on('close', () => void (res.writableEnded || (dropped += 1)));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no' } }));
    });
  });
}

before(async () => {
  upstream = await spawnDemoNode('upstream-2026-plain', { DATABASE_URL: '', MCP_TASKS_RATE_LIMIT: 'off' }, { compiled: true, startTimeoutMs: 60_000 });
  raw = rawServer();
  const rawUrl = `${await listenOnLoopback(raw)}/mcp`;
  node = await within(
    startGatewayNode(configFromEnv({ PORT: '0', HOST: '127.0.0.1', MCP_TASKS_POLL_INTERVAL_MS: '50' }), {
      name: 'gateway-2026-plain',
      upstreams: [
        { name: 'demo', url: upstream.url },
        { name: 'raw', url: rawUrl },
      ],
      logger: quiet,
    }),
    45_000,
    'the gateway node starts',
  );
});

after(async () => {
  await node?.close(500).catch(() => undefined);
  await closeLoopback(raw);
  upstream?.child.kill('SIGTERM');
  await within(upstream?.exited ?? Promise.resolve(null), 15_000, 'the upstream exits');
});

describe("a 2026-07-28 HTTP upstream's plain tools behind the gateway", { timeout: 120_000 }, () => {
  it('are listed as optional task tools to a 2025-11-25 client, and so are its task tools (the gateway makes a task of either when asked)', async () => {
    const reply = await within(legacyRpc(node!.url, 'tools/list', {}), 20_000, 'tools/list');
    const tools = reply.result?.['tools'] as Array<{ name: string; execution?: { taskSupport?: string } }>;
    assert.equal(tools.find((tool) => tool.name === 'demo_greet')?.execution?.taskSupport, 'optional', JSON.stringify(reply));
    // The relay's listing (the upstream's, renamed), with the task support a 2025-11-25 client
    // reads before it sends params.task: without it such a client never asks for the task.
    assert.equal(tools.find((tool) => tool.name === 'demo_export')?.execution?.taskSupport, 'optional', JSON.stringify(reply));
    assert.equal(tools.filter((tool) => tool.name === 'demo_greet').length, 1);
  });

  it('a plain tool called by a client that declares the extension runs as a task of the gateway', async () => {
    const created = await within(rpc(node!.url, 'tools/call', { name: 'demo_greet', arguments: { name: 'Ada' } }), 20_000, 'tools/call demo_greet');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(node!.url, created.result!['taskId'] as string, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /Hello, Ada!/);
  });

  it('and inline for a client that does not', async () => {
    const reply = await within(rpc(node!.url, 'tools/call', { name: 'demo_greet', arguments: { name: 'Grace' } }, { tasks: false }), 20_000, 'inline demo_greet');
    assert.match(JSON.stringify(reply.result), /Hello, Grace!/);
  });

  it("the input it asks on the request becomes the task's input_required; the answer goes back on the next round with its requestState", async () => {
    const created = await within(rpc(node!.url, 'tools/call', { name: 'raw_ask', arguments: {} }), 20_000, 'tools/call raw_ask');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const taskId = created.result!['taskId'] as string;
    const asking = await waitFor(node!.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.deepEqual(Object.keys(asking['inputRequests'] ?? {}), ['elicit-1'], JSON.stringify(asking));
    const updated = await rpc(node!.url, 'tasks/update', { taskId, inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'Ada' } } } });
    assert.equal(updated.error, undefined, JSON.stringify(updated.body));
    const done = await waitFor(node!.url, taskId, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /Hello, Ada! \(round-1\)/);
    assert.equal(rounds.length, 2, JSON.stringify(rounds));
  });

  it("the task's cancel ends the upstream request", async () => {
    const created = await within(rpc(node!.url, 'tools/call', { name: 'raw_wait', arguments: {} }), 20_000, 'tools/call raw_wait');
    const taskId = created.result!['taskId'] as string;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(dropped, 0);
    const cancelled = await rpc(node!.url, 'tasks/cancel', { taskId });
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled.body));
    await eventually(async () => dropped === 1, 10_000, 'the upstream request ended');
  });
});
