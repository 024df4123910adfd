// `mcp-tasks call` against a server built on the 1.x SDK (`@modelcontextprotocol/sdk`, a
// development dependency only), which speaks 2025-11-25 and knows nothing of 2026-07-28: a
// stateful server whose session the call keeps, a task tool of that SDK's own task store, and
// an ordinary tool. The call is a client of the protocol, not of this project's server.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import * as z from 'zod/v4';
import { mcpTasks } from './support/run-mcp-tasks.js';

interface Seen {
  readonly method: string;
  readonly session: string | undefined;
}

function sdk1Server(): { server: Server; seen: Seen[]; sessions: Map<string, StreamableHTTPServerTransport>; taskStore: InMemoryTaskStore } {
  const taskStore = new InMemoryTaskStore();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const seen: Seen[] = [];
  const mcpServer = () => {
    const server = new McpServer({ name: 'sdk1-task-server', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore });
    server.registerTool('greet', { inputSchema: { name: z.string() } }, async ({ name }) => ({ content: [{ type: 'text', text: `Hi ${name}` }] }));
    server.experimental.tasks.registerToolTask(
      'delay',
      { inputSchema: { ms: z.number() }, execution: { taskSupport: 'required' } },
      {
        async createTask({ ms }, extra) {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
          setTimeout(() => void extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `Waited ${ms} ms` }] }), ms);
          return { task };
        },
        async getTask(_args, extra) {
          return (await extra.taskStore.getTask(extra.taskId))!;
        },
        async getTaskResult(_args, extra) {
          return (await extra.taskStore.getTaskResult(extra.taskId)) as never;
        },
      },
    );
    return server;
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as { method?: string }) : undefined;
    const session = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined;
    seen.push({ method: req.method === 'DELETE' ? 'DELETE' : (body?.method ?? 'response'), session });
    let transport = session === undefined ? undefined : sessions.get(session);
    if (!transport && body?.method === 'initialize') {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => void sessions.set(id, created) });
      await mcpServer().connect(created);
      transport = created;
    }
    if (!transport) return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
    await transport.handleRequest(req, res, body);
  });
  return { server, seen, sessions, taskStore };
}

describe('mcp-tasks call against a server on the 1.x SDK', { timeout: 60_000 }, () => {
  let url: string;
  let sdk1: ReturnType<typeof sdk1Server>;
  before(async () => {
    sdk1 = sdk1Server();
    await new Promise<void>((resolve) => sdk1.server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(sdk1.server.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    for (const transport of sdk1.sessions.values()) await transport.close();
    // The store's TTL timers would keep the file running for a minute.
    sdk1.taskStore.cleanup();
    sdk1.server.closeAllConnections();
    await new Promise((resolve) => sdk1.server.close(resolve));
  });

  it("follows that SDK's task to its result within the session it handed out, and ends the session", async () => {
    sdk1.seen.splice(0);
    const run = await mcpTasks(['call', url, 'delay', '--arg', 'ms=300']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Waited 300 ms\n');
    assert.match(run.stderr, /^Task (\S+) created\.\ntask \1: working\n(task \1: working.*\n)*task \1: completed\n$/);
    const initialized = sdk1.seen.findIndex((entry) => entry.method === 'initialize');
    assert.ok(initialized >= 0, JSON.stringify(sdk1.seen));
    const after = sdk1.seen.slice(initialized + 1);
    const session = after[0]?.session;
    assert.ok(session !== undefined && after.every((entry) => entry.session === session), JSON.stringify(sdk1.seen));
    for (const method of ['tools/list', 'tools/call', 'tasks/result', 'DELETE']) assert.ok(after.some((entry) => entry.method === method), `${method} in ${JSON.stringify(after)}`);
  });

  it('calls an ordinary tool of that server inline', async () => {
    const run = await mcpTasks(['call', url, 'greet', '--arg', 'name=Ann']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Hi Ann\n');
  });
});
