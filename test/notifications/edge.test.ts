// The listen edge in process, on the SDK handler directly (no HTTP server, in-memory store):
// keepalives, what is left to the SDK, malformed taskIds, and closing the handler.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpTasks, type TaskListenHandler } from '@mcp-tasks/server';
import { taskTools } from '@mcp-tasks/demo';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { answerOf, readFrames, type SseFrame } from '../support/sse.js';

/** Every message of a listen stream, read until it ends (bounded). */
const readMessagesToEnd = async (response: Response): Promise<any[]> =>
  (await readFrames(response, { timeoutMs: 20_000 })).flatMap((frame: SseFrame) => frame.message ?? []);

/** A JSON-RPC reply as the tests read it. */
type JsonRpcReply = { result: Record<string, any>; error: { code: number; message: string } };

let tasks: McpTasks;
let handler: TaskListenHandler;

before(() => {
  tasks = new McpTasks({ pollIntervalMs: 50 });
  handler = tasks.listen(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'edge-test', version: '1.0.0' });
      tasks.register(server, taskTools);
      return server;
    }),
    { serverName: 'edge-test', keepAliveMs: 50 },
  );
});

after(async () => {
  await handler.close();
  await tasks.close();
});

function request(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal): Request {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { ...requestHeaders(method, params), ...headers },
    body: requestBody(method, params, true),
    ...(signal ? { signal } : {}),
  });
}

async function createTask(name: string, args: Record<string, unknown>): Promise<string> {
  const response = await handler.fetch(request('tools/call', { name, arguments: args }));
  const text = await response.text();
  const message = answerOf(text);
  assert.equal(message.result.resultType, 'task', text);
  return message.result.taskId;
}

describe('the listen edge in front of the SDK handler', () => {
  it('sends keepalive comments, and a client that cancels the body unfollows', async () => {
    const taskId = await createTask('export', { project: 'p', files: 1000, delayMs: 60_000 });
    // No parsedBody: the edge reads the body itself.
    const response = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: [taskId] } }));
    const seen = await readFrames(response, { until: (f) => f.filter((x) => x.raw === ': keepalive').length >= 2, timeoutMs: 20_000 });
    assert.equal(seen[0]!.message!['method'], 'notifications/subscriptions/acknowledged');
    assert.equal(seen[1]!.message!['params'].status, 'working');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(handler.openStreams, 0);
    assert.equal(handler.following, 0);
    await handler.fetch(request('tasks/cancel', { taskId }, { 'mcp-name': taskId }));
  });

  it('leaves header checks to the SDK (-32020) and refuses taskIds that are not strings (-32602)', async () => {
    const mismatch = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: ['x'] } }, { 'mcp-method': 'tools/list' }));
    assert.equal(mismatch.status, 400);
    assert.equal(((await mismatch.json()) as JsonRpcReply).error.code, -32020);
    const bad = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: 'x' } }));
    assert.equal(((await bad.json()) as JsonRpcReply).error.code, -32602);
  });

  it('passes other requests through, and reports each state once, in order, through a fast input round', async () => {
    const taskId = await createTask('multi_input', {});
    const response = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: [taskId] } }));
    const reading = readMessagesToEnd(response);
    const answer = async (key: string, content: Record<string, unknown>) =>
      handler.fetch(request('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content } } }, { 'mcp-name': taskId }));
    const until = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const outstanding = async () => {
      const reply = (await (await handler.fetch(request('tasks/get', { taskId }, { 'mcp-name': taskId }))).json()) as JsonRpcReply;
      return Object.keys(reply.result.inputRequests ?? {}).length;
    };
    await until(async () => (await outstanding()) === 2);
    await answer('name', { name: 'Ada' });
    await until(async () => (await outstanding()) === 1);
    await answer('confirm', { confirm: true });
    const seen = await reading;
    const states = seen.filter((m) => m.method === 'notifications/tasks').map((m) => m.params);
    const keys = states.map((s) => `${s.status}:${Object.keys(s.inputRequests ?? {}).sort().join('+')}`);
    assert.ok(keys.indexOf('input_required:confirm+name') < keys.indexOf('input_required:confirm'), keys.join());
    assert.equal(keys.at(-1), 'completed:');
    assert.equal(new Set(keys).size, keys.length, `no state twice: ${keys.join()}`);
    assert.equal(states.at(-1).result.content[0].text, 'Ada confirmed.');
    assert.equal(seen.at(-1).result.resultType, 'complete');
  });

  it('ends open streams gracefully when the handler closes', async () => {
    const taskId = await createTask('export', { project: 'p', files: 1000, delayMs: 60_000 });
    const response = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: [taskId] } }));
    const reading = readMessagesToEnd(response);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await handler.endStreams();
    const seen = await reading;
    assert.deepEqual(seen.at(-1).result._meta['io.modelcontextprotocol/serverInfo'], { name: 'edge-test', version: '0.0.0' });
    assert.equal(handler.following, 0);
    await handler.fetch(request('tasks/cancel', { taskId }, { 'mcp-name': taskId }));
  });
});
