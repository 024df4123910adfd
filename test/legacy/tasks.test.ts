// 2025-11-25 tasks on one in-process demo node (memory store): that revision's shapes and error
// codes, raw and through the real 1.x client. The cluster behaviour is in cluster-legacy-tasks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDemoServer, taskTools, type DemoServer } from '@mcp-tasks/demo';
import { defineTool, McpTasks, type LegacyTasksHandler } from '@mcp-tasks/server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectLegacyClient, legacyRpc, postAnswer, type LegacyClient } from '../support/legacy-client.js';
import { rpc } from '../support/server-raw-client.js';
import { within } from '../support/within.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';
import { frameMessage } from '../support/sse.js';

const TTL_MS = 60_000;
const NOT_FOUND = { code: -32602, message: 'Failed to retrieve task: Task not found' };

describe('2025-11-25 tasks on one node', () => {
  let demo: DemoServer;
  const clients: LegacyClient[] = [];
  before(async () => {
    demo = await startDemoServer({ port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'legacy', pollIntervalMs: 50, ttlMs: TTL_MS, maxPerPrincipal: undefined });
  });
  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await demo.close(0);
  });
  const client = async (): Promise<LegacyClient> => {
    const connected = await connectLegacyClient({ route: () => demo.url });
    clients.push(connected);
    return connected;
  };
  const createTask = async (name: string, args: Record<string, unknown>, task: Record<string, unknown> = {}) => {
    const reply = await legacyRpc(demo.url, 'tools/call', { name, arguments: args, task });
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    return reply.result!['task'] as { taskId: string; status: string; ttl: number | null; pollInterval: number; createdAt: string; lastUpdatedAt: string };
  };
  const statusOf = async (taskId: string) => (await legacyRpc(demo.url, 'tasks/get', { taskId })).result?.['status'];
  const until = async (taskId: string, status: string) => {
    for (let i = 0; i < 400 && (await statusOf(taskId)) !== status; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(await statusOf(taskId), status);
  };

  it('initialize without authorization advertises tasks without tasks/list, which is then not served', async () => {
    const c = await client();
    assert.deepEqual(c.getServerCapabilities()?.tasks, { cancel: {}, requests: { tools: { call: {} } } });
    // SEP-2663: the 2026-07-28 extension is not defined in that revision, so it is not advertised beside it.
    const extensions = (c.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    assert.equal(extensions?.['io.modelcontextprotocol/tasks'], undefined, `no 2026 extension in a 2025-11-25 initialize: ${JSON.stringify(c.getServerCapabilities())}`);
    const listed = await legacyRpc(demo.url, 'tasks/list', {});
    assert.equal(listed.error?.code, -32601);
    assert.equal(listed.result, undefined);
  });

  it("tools/call with params.task answers that revision's CreateTaskResult, its ttl capped by the server's", async () => {
    const short = await createTask('slow_compute', { seconds: 0.05 }, { ttl: 5_000 });
    assert.deepEqual(Object.keys(short).sort(), ['createdAt', 'lastUpdatedAt', 'pollInterval', 'status', 'taskId', 'ttl']);
    assert.equal(short.status, 'working');
    assert.equal(short.ttl, 5_000);
    assert.equal(short.pollInterval, 50);
    assert.equal((await createTask('slow_compute', { seconds: 0.05 }, { ttl: 10 * TTL_MS })).ttl, TTL_MS);
    assert.equal((await createTask('slow_compute', { seconds: 0.05 })).ttl, TTL_MS);
    const bad = await legacyRpc(demo.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 }, task: { ttl: 'soon' } });
    assert.deepEqual(bad.error, { code: -32602, message: 'params.task.ttl must be a positive integer (milliseconds)' });
  });

  it('a required tool without params.task gets -32601; an optional one runs inline', async () => {
    const required = await legacyRpc(demo.url, 'tools/call', { name: 'failing_job', arguments: {} });
    assert.equal(required.error?.code, -32601);
    assert.match(required.error?.message ?? '', /failing_job requires task-augmented execution/);
    const inline = await legacyRpc(demo.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 } });
    assert.match(JSON.stringify(inline.result), /Computed result after 0\.05s/);
    assert.equal(inline.result?.['task'], undefined);
  });

  it('an optional tool called inline that asks for input answers isError naming the input and saying to call it with params.task', async () => {
    const inline = await legacyRpc(demo.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    assert.equal(inline.error, undefined, JSON.stringify(inline));
    assert.equal(inline.result?.['isError'], true);
    assert.deepEqual(inline.result?.['content'], [
      { type: 'text', text: 'Tool confirm_delete asks for input (confirm (elicitation/create)), which a 2025-11-25 client can answer only in a task: call it with params.task' },
    ]);
  });

  it('tasks/get, tasks/cancel and tasks/result answer an unknown or malformed id with -32602 Task not found', async () => {
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/result']) {
      assert.deepEqual((await legacyRpc(demo.url, method, { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' })).error, NOT_FOUND, method);
      assert.deepEqual((await legacyRpc(demo.url, method, { taskId: 'not a task id' })).error, NOT_FOUND, method);
      assert.equal((await legacyRpc(demo.url, method, {})).error?.code, -32602, method);
    }
  });

  it('tasks/cancel answers the cancelled task, and refuses a terminal one with -32602 naming its status', async () => {
    const running = await createTask('export', { project: 'p', files: 1_000, delayMs: 50 });
    const cancelled = await legacyRpc(demo.url, 'tasks/cancel', { taskId: running.taskId });
    assert.equal(cancelled.result?.['status'], 'cancelled');
    assert.equal(cancelled.result?.['taskId'], running.taskId);
    assert.deepEqual((await legacyRpc(demo.url, 'tasks/cancel', { taskId: running.taskId })).error, {
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'cancelled'",
    });
    assert.deepEqual((await legacyRpc(demo.url, 'tasks/result', { taskId: running.taskId })).error, {
      code: -32602,
      message: `Task ${running.taskId} was cancelled: it has no result`,
    });
    const done = await createTask('slow_compute', { seconds: 0.01 });
    await until(done.taskId, 'completed');
    assert.deepEqual((await legacyRpc(demo.url, 'tasks/cancel', { taskId: done.taskId })).error, {
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
  });

  it("tasks/result waits for the end and answers what tools/call would have: the tool's isError result, or a failed task's JSON-RPC error", async () => {
    const failing = await createTask('failing_job', {});
    const result = await legacyRpc(demo.url, 'tasks/result', { taskId: failing.taskId });
    assert.equal(result.result?.['isError'], true);
    assert.deepEqual((result.result?.['_meta'] as Record<string, unknown>)['io.modelcontextprotocol/related-task'], { taskId: failing.taskId });
    assert.equal(await statusOf(failing.taskId), 'completed');
    const protocol = await createTask('protocol_error_job', {});
    assert.deepEqual((await legacyRpc(demo.url, 'tasks/result', { taskId: protocol.taskId })).error, {
      code: -32603,
      message: 'The job hit an internal protocol error',
      data: { reason: 'simulated' },
    });
    assert.equal(await statusOf(protocol.taskId), 'failed');
  });

  it('the tasks/result stream asks for input with relatedTask and an id naming task and key, sends status notifications, carries no event ids', async () => {
    const task = await createTask('confirm_delete', { filename: 'n.txt', delayMs: 100 });
    const response = await fetch(demo.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId: task.taskId } }),
      signal: AbortSignal.timeout(20_000),
    });
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const frames: Array<Record<string, unknown>> = [];
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    const read = async (until: (message: Record<string, unknown>) => boolean) => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended: ${JSON.stringify(frames)}`);
        buffer += value;
        assert.doesNotMatch(buffer, /^id:/m, 'no SSE event ids');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message = frameMessage(frame);
          if (!message) continue;
          frames.push(message);
          if (until(message)) return message;
        }
      }
    };
    const asked = await within(read((message) => message['method'] === 'elicitation/create'), 20_000, 'the elicitation');
    const key = Buffer.from('confirm').toString('base64url');
    assert.equal(asked['id'], `mcp-tasks.input.${task.taskId}.${key}`);
    assert.deepEqual((asked['params'] as { _meta: unknown })._meta, { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    assert.equal(await postAnswer(demo.url, { id: asked['id'], result: { action: 'accept', content: { confirm: true } } }), 202);
    const final = await within(read((message) => message['id'] === 7), 20_000, 'the result');
    assert.match(JSON.stringify(final['result']), /Deleted n\.txt\./);
    const statuses = frames.filter((message) => message['method'] === 'notifications/tasks/status').map((message) => (message['params'] as { status: string }).status);
    assert.deepEqual(statuses, ['input_required', 'working', 'completed'].filter((status) => statuses.includes(status)));
    assert.ok(statuses.includes('input_required') && statuses.includes('completed'), JSON.stringify(frames));
    const notification = frames.find((message) => message['method'] === 'notifications/tasks/status')!;
    assert.equal((notification['params'] as { _meta?: unknown })._meta, undefined);
  });

  it("an error the client's handler answers counts as a declined elicitation", async () => {
    const c = await client();
    c.setRequestHandler(ElicitRequestSchema, async () => {
      throw new Error('the user closed the dialog');
    });
    let text = '';
    const run = async () => {
      for await (const message of c.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'k.txt' } }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'result') text = JSON.stringify(message.result);
        if (message.type === 'error') assert.fail(message.error.message);
      }
    };
    await within(run(), 20_000, 'the call ends');
    assert.match(text, /Kept k\.txt\./);
  });

  it('a second answer to an answered key changes nothing, and a malformed answer is refused with -32602 and stores nothing', async () => {
    const task = await createTask('confirm_delete', { filename: 'z.txt' });
    await until(task.taskId, 'input_required');
    const id = `mcp-tasks.input.${task.taskId}.${Buffer.from('confirm').toString('base64url')}`;
    assert.equal(await postAnswer(demo.url, { id, result: { action: 'decline' } }), 202);
    assert.equal(await postAnswer(demo.url, { id, result: { action: 'accept', content: { confirm: true } } }), 202);
    await until(task.taskId, 'completed');
    assert.match(JSON.stringify((await legacyRpc(demo.url, 'tasks/result', { taskId: task.taskId })).result), /Kept z\.txt\./);
    const malformed = await createTask('confirm_delete', { filename: 'm.txt' });
    await until(malformed.taskId, 'input_required');
    const malformedId = `mcp-tasks.input.${malformed.taskId}.${Buffer.from('confirm').toString('base64url')}`;
    const refused = await fetch(demo.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: malformedId, result: { action: 'maybe' } }),
    });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: { code: number } }).error.code, -32602);
    assert.equal(await statusOf(malformed.taskId), 'input_required');
  });
});

describe('2025-11-25 tasks and the per-owner rate limit', () => {
  it("2025-11-25 tasks/* requests of an authenticated owner count against its rate limit (HTTP 429 beyond the burst); without a subject there is no owner's rate", async () => {
    const tasks = new McpTasks({ rateLimit: { requestsPerSecond: 1, burst: 3 } });
    const handler = tasks.handler({ name: 'limited', version: '1.0.0', tools: taskTools });
    const authInfo = { token: 't', clientId: 'app', scopes: [], extra: { sub: 'limited-owner' } };
    const authed = await serveOnLoopback({ fetch: (request, options) => handler.fetch(request, { ...options, authInfo }) });
    const { http, url } = await serveOnLoopback(handler);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await legacyRpc(authed.url, 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' })).status);
      assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
      assert.ok(statuses.slice(3).includes(429), JSON.stringify(statuses));
      const open: number[] = [];
      for (let i = 0; i < 8; i += 1) open.push((await legacyRpc(url, 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' })).status);
      assert.deepEqual(open, Array(8).fill(200));
    } finally {
      await closeLoopback(authed.http);
      await closeLoopback(http);
      await handler.close();
      await tasks.close();
    }
  });
});

describe('2025-11-25 tasks with tasks: false', () => {
  it('advertises no tasks capability, and params.task is ignored', async () => {
    const tasks = new McpTasks({ tasks: false });
    const handler = tasks.handler({ name: 'plain', version: '1.0.0', tools: taskTools });
    const { http, url } = await serveOnLoopback(handler);
    try {
      const c = await connectLegacyClient({ route: () => url });
      assert.equal(c.getServerCapabilities()?.tasks, undefined);
      await c.close();
      const inline = await legacyRpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 }, task: {} });
      assert.match(JSON.stringify(inline.result), /Computed result after 0\.05s/);
      assert.equal((await legacyRpc(url, 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' })).error?.code, -32601);
    } finally {
      await closeLoopback(http);
      await handler.close();
      await tasks.close();
    }
  });
});

describe('2025-11-25 tasks from the pieces behind tasks.handler', () => {
  const neverTask = defineTool({
    name: 'never_task',
    task: 'forbidden',
    input: z.object({}),
    execute: () => ({ content: [{ type: 'text', text: 'inline only' }] }),
  });
  const sampler = defineTool({
    name: 'sampler',
    task: 'optional',
    input: z.object({}),
    async execute(_args, ctx) {
      const reply = await ctx.sample('draft', { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 });
      return { content: [{ type: 'text', text: `model ${reply.model}` }] };
    },
  });
  const waiter = defineTool({
    name: 'waiter',
    task: 'required',
    input: z.object({}),
    async execute(_args, ctx) {
      const answer = await ctx.elicit('go', { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } } } });
      return { content: [{ type: 'text', text: answer.action }] };
    },
  });
  let tasks: McpTasks;
  let legacy: LegacyTasksHandler;
  let close: () => Promise<void>;
  let url: string;
  before(async () => {
    tasks = new McpTasks({ serverName: 'pieces', pollIntervalMs: 50, maxPerPrincipal: 2, listenStreams: { maxPerOwner: 2, maxPerNode: 10 }, resultStreams: { maxPerOwner: 1, maxPerNode: 2 } });
    legacy = tasks.legacyTasks(
      createMcpHandler((context) => {
        const server = new McpServer({ name: 'pieces', version: '1.0.0' });
        tasks.register(server, [neverTask, sampler, waiter, ...taskTools], context);
        return server;
      }),
    );
    const handler = tasks.listen(legacy, { serverName: 'pieces' });
    const served = await serveOnLoopback(handler);
    const http = served.http;
    url = served.url;
    close = async () => {
      await closeLoopback(http);
      await handler.close();
      await tasks.close();
    };
  });
  after(() => close());

  const taskOf = async (name: string) => {
    const reply = await legacyRpc(url, 'tools/call', { name, arguments: {}, task: {} });
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    return (reply.result!['task'] as { taskId: string }).taskId;
  };
  const statusOf = async (taskId: string) => (await legacyRpc(url, 'tasks/get', { taskId })).result?.['status'];
  const until = async (taskId: string, status: string) => {
    for (let i = 0; i < 400 && (await statusOf(taskId)) !== status; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(await statusOf(taskId), status);
  };

  it('a forbidden tool called with params.task gets -32601', async () => {
    const reply = await legacyRpc(url, 'tools/call', { name: 'never_task', arguments: {}, task: {} });
    assert.equal(reply.error?.code, -32601);
    assert.match(reply.error?.message ?? '', /never_task does not run as a task/);
  });

  it('an error answer to a sampling request ends the task failed with the client error', async () => {
    const taskId = await taskOf('sampler');
    await until(taskId, 'input_required');
    const id = `mcp-tasks.input.${taskId}.${Buffer.from('draft').toString('base64url')}`;
    assert.equal(await postAnswer(url, { id, error: { code: -32601, message: 'Method not found' } }), 202);
    await until(taskId, 'failed');
    assert.deepEqual((await legacyRpc(url, 'tasks/result', { taskId })).error, {
      code: -32601,
      message: 'The client answered sampling/createMessage with an error: Method not found',
    });
  });

  it('a task created by a 2025-11-25 client is read by a 2026-07-28 client of the same owner in its own shapes, and the other way round', async () => {
    const legacyTask = await taskOf('waiter');
    await until(legacyTask, 'input_required');
    const read = await rpc(url, 'tasks/get', { taskId: legacyTask });
    assert.equal(read.result?.['status'], 'input_required');
    assert.deepEqual(Object.keys(read.result?.['inputRequests'] as object), ['go']);
    // Answered through tasks/update: the 2025-11-25 client's next read sees the result.
    assert.equal((await rpc(url, 'tasks/update', { taskId: legacyTask, inputResponses: { go: { action: 'accept', content: { go: true } } } })).error, undefined);
    await until(legacyTask, 'completed');
    assert.match(JSON.stringify((await legacyRpc(url, 'tasks/result', { taskId: legacyTask })).result), /accept/);
    const modern = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 } });
    const modernTask = modern.result?.['taskId'] as string;
    await until(modernTask, 'completed');
    const legacyRead = await legacyRpc(url, 'tasks/get', { taskId: modernTask });
    assert.deepEqual(Object.keys(legacyRead.result ?? {}).sort(), ['createdAt', 'lastUpdatedAt', 'pollInterval', 'status', 'taskId', 'ttl']);
  });

  it('over the quota a required tool is refused with -32600 and an optional one runs inline, where input it asks for is refused saying no task could start', async () => {
    // maxPerPrincipal is 2: two waiting tasks fill it.
    const held = [await taskOf('waiter'), await taskOf('waiter')];
    const required = await legacyRpc(url, 'tools/call', { name: 'waiter', arguments: {}, task: {} });
    assert.equal(required.error?.code, -32600);
    const optional = await legacyRpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 }, task: {} });
    assert.match(JSON.stringify(optional.result), /Computed result after 0\.01s/);
    const asking = await legacyRpc(url, 'tools/call', { name: 'sampler', arguments: {}, task: {} });
    assert.equal(asking.result?.['isError'], true, JSON.stringify(asking));
    assert.match(JSON.stringify(asking.result), /Tool sampler asks for input \(draft \(sampling\/createMessage\)\), which a 2025-11-25 client can answer only in a task: no task could start now/);
    for (const taskId of held) await legacyRpc(url, 'tasks/cancel', { taskId });
  });

  it('a tasks/result stream the client leaves is closed', async () => {
    const taskId = await taskOf('waiter');
    await until(taskId, 'input_required');
    const abort = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    await within(reader.read(), 10_000, 'the first frame');
    assert.equal(legacy.openStreams, 1);
    abort.abort();
    for (let i = 0; i < 200 && legacy.openStreams > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(legacy.openStreams, 0);
    await legacyRpc(url, 'tasks/cancel', { taskId });
  });

  it('ending the streams (drain, close) answers an open tasks/result with an error that says to call again', async () => {
    const taskId = await taskOf('waiter');
    await until(taskId, 'input_required');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tasks/result', params: { taskId } }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = response.text();
    for (let i = 0; i < 200 && legacy.openStreams === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    legacy.endStreams();
    const body = await within(text, 10_000, 'the stream ends');
    assert.match(body, /"id":11,"error":\{"code":-32603,"message":"The server is shutting down: call tasks\/result again"\}/);
    assert.equal(await statusOf(taskId), 'input_required');
    await legacyRpc(url, 'tasks/cancel', { taskId });
  });

  it("open tasks/result streams count against their own stream caps: past the node's (no subject here, so no owner's) HTTP 503, a slot comes back when a stream ends", async () => {
    const taskId = await taskOf('waiter');
    await until(taskId, 'input_required');
    const open = (signal: AbortSignal) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tasks/result', params: { taskId } }),
        signal,
      });
    const first = new AbortController();
    const second = new AbortController();
    try {
      assert.equal((await open(first.signal)).status, 200);
      assert.equal((await open(second.signal)).status, 200);
      const refused = await open(AbortSignal.timeout(10_000));
      assert.equal(refused.status, 503);
      assert.deepEqual(((await refused.json()) as { error: { code: number; data: unknown } }).error, {
        code: -32000,
        message: 'Too many open tasks/result streams on this node: at most 2 (resultStreams.maxPerNode); close one or retry later',
        data: { limit: 'resultStreams.maxPerNode', max: 2 },
      });
      first.abort();
      for (let i = 0; i < 200 && legacy.openStreams > 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      const third = new AbortController();
      assert.equal((await open(third.signal)).status, 200);
      third.abort();
    } finally {
      first.abort();
      second.abort();
      await legacyRpc(url, 'tasks/cancel', { taskId });
    }
  });
});
