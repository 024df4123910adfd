// McpTasks.handler is the whole endpoint in one call: served by node:http through the SDK's own
// Node adapter, with nothing else wired, on a real PostgreSQL store.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { TaskStore } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks, type TaskListenHandler } from '@mcp-tasks/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AuthInfo, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { listen } from '../support/notifications-client.js';
import { post, requestBody, requestHeaders, rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';
import { closeLoopback, listenOnLoopback } from '../support/loopback-http.js';

const Output = z.object({ total: z.number() });

const sum = defineTool({
  name: 'sum',
  title: 'Sum',
  description: 'Adds numbers',
  task: 'optional',
  input: z.object({ values: z.array(z.number()), shape: z.enum(['valid', 'missing', 'wrong']).default('valid') }),
  outputSchema: Output,
  icons: [{ src: 'https://example.test/sum.png', mimeType: 'image/png' }],
  annotations: { readOnlyHint: true },
  _meta: { 'example.test/cost': 'low' },
  execute: async ({ values, shape }) => {
    const total = values.reduce((a, b) => a + b, 0);
    if (shape === 'missing') return { content: [{ type: 'text', text: String(total) }] };
    if (shape === 'wrong') return { content: [{ type: 'text', text: String(total) }], structuredContent: { total: String(total) } };
    return { content: [{ type: 'text', text: String(total) }], structuredContent: { total } };
  },
});

const confirm = defineTool({
  name: 'confirm',
  task: 'required',
  input: z.object({}),
  execute: async (_args, ctx) => {
    const answer = await ctx.elicit('ok', { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    return { content: [{ type: 'text', text: `answer: ${answer.action}` }] };
  },
});

/** An ordinary SDK tool with the same output schema as `sum`, to compare the SDK's own answer with. */
function registerPlainSum(server: McpServer): void {
  server.registerTool('plain-sum', { inputSchema: z.object({}), outputSchema: Output }, async () => ({ content: [{ type: 'text', text: 'no structured content' }] }));
}

/** Counts `get` on a real store (and passes everything on to it). */
function countingGets(store: PostgresTaskStore): { store: TaskStore; gets: () => number } {
  let gets = 0;
  const proxy = new Proxy(store, {
    get(target, prop) {
      // A task's whole record or its reader's part: either is one read of the row.
      if (prop === 'get') return (...args: Parameters<TaskStore['get']>) => ((gets += 1), target.get(...args));
      if (prop === 'read') return (...args: Parameters<TaskStore['read']>) => ((gets += 1), target.read(...args));
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, gets: () => gets };
}

const TOKEN: AuthInfo = { token: 'alice', clientId: 'app', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { sub: 'alice' } };

let db: TestDatabase;
let tasks: McpTasks;
let handler: TaskListenHandler;
let http: Server;
let url: string;
let counted: ReturnType<typeof countingGets>;

before(async () => {
  db = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: db.url });
  const node = await PostgresTaskNode.start(store, { nodeId: 'front-door-node' });
  counted = countingGets(store);
  tasks = new McpTasks({ store: counted.store, node, pollIntervalMs: 50 });
  handler = tasks.handler({ name: 'front-door', version: '1.0.0', tools: [sum, confirm], register: registerPlainSum });
  const serve = toNodeHandler(handler);
  // The host's own auth stand-in: a bearer header becomes req.auth, which the adapter passes on.
  http = createServer((req: IncomingMessage & { auth?: AuthInfo }, res) => {
    if (req.headers.authorization === 'Bearer alice') req.auth = TOKEN;
    void serve(req, res);
  });
  url = await listenOnLoopback(http);
});

after(async () => {
  await closeLoopback(http);
  await handler?.close();
  await tasks?.close();
  await db?.drop();
});

describe('McpTasks.handler serves the whole endpoint in one call', { timeout: 60_000 }, () => {
  it('a task tool called with the extension becomes a task that completes with its structured result', async () => {
    const created = await rpc(url, 'tools/call', { name: 'sum', arguments: { values: [1, 2, 3] } });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working');
    assert.equal(done['status'], 'completed');
    assert.deepEqual(done['result']['structuredContent'], { total: 6 });
  });

  it('an ordinary tool added by register is served beside the task tools', async () => {
    const listed = await rpc(url, 'tools/list', {});
    const names = (listed.result?.['tools'] as { name: string }[]).map((tool) => tool.name).sort();
    assert.deepEqual(names, ['confirm', 'plain-sum', 'sum']);
  });

  // On 2026-07-28 the SDK strips `execution` (test/server/errors.test.ts covers it for 2025 clients).
  it('tools/list shows what a task tool declares: title, icons, annotations, _meta and outputSchema', async () => {
    const listed = await rpc(url, 'tools/list', {});
    const tool = (listed.result?.['tools'] as Record<string, any>[]).find((t) => t['name'] === 'sum')!;
    assert.equal(tool['title'], 'Sum');
    assert.deepEqual(tool['icons'], [{ src: 'https://example.test/sum.png', mimeType: 'image/png' }]);
    assert.deepEqual(tool['annotations'], { readOnlyHint: true });
    assert.deepEqual(tool['_meta'], { 'example.test/cost': 'low' });
    assert.equal(tool['outputSchema']['type'], 'object');
    assert.deepEqual(tool['outputSchema']['properties']['total'], { type: 'number' });
  });

  it('a tasks/update whose inputResponses is not an object is refused with -32602 without any edge of the host', async () => {
    const params = { taskId: 'c6b3b0b8-0000-4000-8000-000000000000', inputResponses: 'yes' };
    const reply = await post(url, requestBody('tasks/update', params, true), requestHeaders('tasks/update', params));
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /inputResponses/);
  });

  it('subscriptions/listen with taskIds streams the task to its end, without any edge of the host', async () => {
    const created = await rpc(url, 'tools/call', { name: 'confirm', arguments: {} });
    const taskId = created.result!['taskId'] as string;
    await waitFor(url, taskId, (task) => task['status'] === 'input_required');
    const stream = await listen(url, [taskId]);
    try {
      await stream.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks' && m['params']['status'] === 'input_required'), 5_000, 'the input_required state');
      const answered = await rpc(url, 'tasks/update', { taskId, inputResponses: { ok: { action: 'accept', content: { ok: true } } } });
      assert.equal(answered.result?.['resultType'], 'complete', JSON.stringify(answered.body));
      await stream.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks' && m['params']['status'] === 'completed'), 5_000, 'the completed state');
      await within(stream.ended, 5_000, 'the stream to end after the last state');
      assert.equal(stream.tasks().at(-1)?.['status'], 'completed');
    } finally {
      stream.abort();
    }
  });
});

describe('a task tool result is checked against its outputSchema as the SDK checks an ordinary tool', { timeout: 60_000 }, () => {
  it('a task whose result has no structuredContent ends failed with the SDK -32602 output validation error', async () => {
    const created = await rpc(url, 'tools/call', { name: 'sum', arguments: { values: [1], shape: 'missing' } });
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working');
    assert.equal(done['status'], 'failed');
    assert.deepEqual(done['error'], { code: -32602, message: 'Output validation error: Tool sum has an output schema but no structured content was provided' });
  });

  it('a task whose structuredContent does not match ends failed with the error naming the field', async () => {
    const created = await rpc(url, 'tools/call', { name: 'sum', arguments: { values: [1], shape: 'wrong' } });
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working');
    assert.equal(done['status'], 'failed');
    assert.equal(done['error']['code'], -32602);
    assert.match(done['error']['message'], /^Output validation error: Invalid structured content for tool sum: total: /);
  });

  it('an inline run with no structuredContent answers exactly what the SDK answers for an ordinary tool', async () => {
    const inline = await rpc(url, 'tools/call', { name: 'sum', arguments: { values: [1], shape: 'missing' } }, { tasks: false });
    const plain = await rpc(url, 'tools/call', { name: 'plain-sum', arguments: {} }, { tasks: false });
    assert.equal(inline.result?.['isError'], true, JSON.stringify(inline.body));
    assert.deepEqual(inline.result?.['content'], [{ type: 'text', text: 'Output validation error: Tool sum has an output schema but no structured content was provided' }]);
    assert.deepEqual(plain.result?.['content'], [{ type: 'text', text: 'Output validation error: Tool plain-sum has an output schema but no structured content was provided' }]);
  });
});

describe('an authorised tasks/get', { timeout: 60_000 }, () => {
  it('reads its task from the store once (the scope challenge read serves the handler)', async () => {
    const headers = (method: string, params: Record<string, unknown>) => ({ ...requestHeaders(method, params), authorization: 'Bearer alice' });
    const callParams = { name: 'sum', arguments: { values: [2] } };
    const created = await post(url, requestBody('tools/call', callParams, true), headers('tools/call', callParams));
    const taskId = created.result!['taskId'] as string;
    const getParams = { taskId };
    let reply;
    for (let tries = 0; tries < 100; tries += 1) {
      const before = counted.gets();
      reply = await post(url, requestBody('tasks/get', getParams, true), headers('tasks/get', getParams));
      assert.equal(counted.gets() - before, 1, 'reads of the task for one tasks/get');
      if (reply.result?.['status'] === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(reply?.result?.['status'], 'completed', JSON.stringify(reply?.body));
  });

  it('of another owner still answers not found, reading once', async () => {
    const callParams = { name: 'sum', arguments: { values: [2] } };
    const created = await rpc(url, 'tools/call', callParams); // the host's task, not alice's
    const getParams = { taskId: created.result!['taskId'] as string };
    const before = counted.gets();
    const reply = await post(url, requestBody('tasks/get', getParams, true), { ...requestHeaders('tasks/get', getParams), authorization: 'Bearer alice' });
    assert.equal(counted.gets() - before, 1);
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply.body));
  });
});
