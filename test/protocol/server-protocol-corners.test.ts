// The protocol's corners over real HTTP: how errors end inline and as tasks, input the creating
// request did not declare, and `prepare` running once when a task cannot start.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineTool, type AnyTaskTool } from '@mcp-tasks/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { startMcpTasksHttp, type McpTasksHttp } from '../support/mcp-tasks-http.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const prepareCalls: boolean[] = [];

const tools: AnyTaskTool[] = [
  defineTool({
    name: 'plain_throw',
    task: 'optional',
    input: z.object({ n: z.number().optional() }),
    async execute() {
      throw new Error('The upstream rejected the batch');
    },
  }),
  defineTool({
    name: 'rpc_throw',
    task: 'optional',
    input: z.object({}),
    async execute() {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'Quota of the upstream exhausted', { retryAfter: 3 });
    },
  }),
  defineTool({
    name: 'ask_name',
    task: 'optional',
    input: z.object({}),
    async execute(_args, ctx) {
      const answer = await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
      return { content: [{ type: 'text', text: `Hello, ${String(answer.content?.['name'])}!` }] };
    },
  }),
  defineTool({
    name: 'counted_prepare',
    task: 'optional',
    input: z.object({}),
    prepare(_args, ctx) {
      prepareCalls.push(ctx.asTask);
      return 'prepared once';
    },
    async execute(_args, ctx) {
      return { content: [{ type: 'text', text: `${ctx.prepared} (${ctx.mode})` }] };
    },
  }),
  defineTool({
    name: 'hold',
    task: 'optional',
    input: z.object({}),
    async execute(_args, ctx) {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      return { content: [] };
    },
  }),
];

let server: McpTasksHttp;
let quota: McpTasksHttp;
before(async () => {
  server = await startMcpTasksHttp({ pollIntervalMs: 50 }, tools);
  quota = await startMcpTasksHttp({ pollIntervalMs: 50, maxPerPrincipal: 1 }, tools);
});
after(async () => {
  await server?.close();
  await quota?.close();
});

async function taskOf(url: string, name: string, args: Record<string, unknown> = {}) {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return waitFor(url, created.result!['taskId'], (t) => ['completed', 'failed', 'cancelled'].includes(t['status']));
}

describe('errors: inline and as a task', () => {
  it('a plain throw ends completed with the same isError result the inline run answers', async () => {
    const { _meta, ...inline } = (await rpc(server.url, 'tools/call', { name: 'plain_throw', arguments: {} }, { tasks: false })).result!;
    assert.deepEqual(inline, { resultType: 'complete', content: [{ type: 'text', text: 'The upstream rejected the batch' }], isError: true });
    const task = await taskOf(server.url, 'plain_throw');
    assert.equal(task['status'], 'completed');
    assert.deepEqual(task['result'], inline);
  });

  it('a thrown ProtocolError ends the task failed and answers the inline run with the same JSON-RPC error', async () => {
    const expected = { code: -32600, message: 'Quota of the upstream exhausted', data: { retryAfter: 3 } };
    const task = await taskOf(server.url, 'rpc_throw');
    assert.equal(task['status'], 'failed');
    assert.deepEqual(task['error'], expected);
    const inline = await rpc(server.url, 'tools/call', { name: 'rpc_throw', arguments: {} }, { tasks: false });
    assert.equal(inline.result, undefined);
    assert.deepEqual(inline.error, expected);
  });

  it('bad arguments are -32602 inline as well as for a task, and no task is created', async () => {
    for (const tasks of [true, false]) {
      const reply = await rpc(server.url, 'tools/call', { name: 'plain_throw', arguments: { n: 'three' } }, { tasks });
      assert.equal(reply.error?.code, -32602, `tasks=${tasks}: ${JSON.stringify(reply.body)}`);
      assert.match(reply.error!.message, /Invalid arguments for tool plain_throw: n: /);
    }
    assert.equal(server.tasks.runtime.running, 0);
  });
});

describe('input and the declared client capabilities', () => {
  it('a task from a request that declared only the extension does not go input_required: it fails with -32021', async () => {
    const created = await rpc(server.url, 'tools/call', { name: 'ask_name', arguments: {} }, { capabilities: {} });
    const taskId = created.result!['taskId'] as string;
    const task = await waitFor(server.url, taskId, (t) => t['status'] !== 'working');
    assert.equal(task['status'], 'failed');
    assert.deepEqual(task['error'], {
      code: -32021,
      message: `Cannot request input "name" (elicitation/create): the client capabilities of the request that created the task do not declare elicitation.form`,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
  });

  it('the inline run of the same tool is refused with the same -32021', async () => {
    const inline = await rpc(server.url, 'tools/call', { name: 'ask_name', arguments: {} }, { tasks: false, capabilities: {} });
    assert.equal(inline.error?.code, -32021);
    assert.deepEqual(inline.error?.data, { requiredCapabilities: { elicitation: { form: {} } } });
  });

  it('a request that declared elicitation gets the input request', async () => {
    const created = await rpc(server.url, 'tools/call', { name: 'ask_name', arguments: {} }, { capabilities: { elicitation: { form: {} } } });
    const taskId = created.result!['taskId'] as string;
    const waiting = await waitFor(server.url, taskId, (t) => t['status'] !== 'working');
    assert.equal(waiting['status'], 'input_required');
    await rpc(server.url, 'tasks/update', { taskId, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } });
    const done = await waitFor(server.url, taskId, (t) => t['status'] === 'completed');
    assert.equal(done['result']['content'][0]['text'], 'Hello, Ada!');
  });
});

describe('prepare', () => {
  it('runs once when an optional tool falls back to inline over the quota', async () => {
    const held = await rpc(quota.url, 'tools/call', { name: 'hold', arguments: {} });
    assert.equal(held.result?.['resultType'], 'task');
    prepareCalls.length = 0;
    const reply = await rpc(quota.url, 'tools/call', { name: 'counted_prepare', arguments: {} });
    assert.equal(reply.result?.['resultType'], 'complete', JSON.stringify(reply.body));
    assert.equal(reply.result?.['content'][0]['text'], 'prepared once (inline)');
    assert.deepEqual(prepareCalls, [true]);
    await rpc(quota.url, 'tasks/cancel', { taskId: held.result!['taskId'] });
  });

  it('runs once for a task and once for a plain inline run', async () => {
    prepareCalls.length = 0;
    const task = await taskOf(server.url, 'counted_prepare');
    assert.equal(task['result']['content'][0]['text'], 'prepared once (task)');
    const inline = await rpc(server.url, 'tools/call', { name: 'counted_prepare', arguments: {} }, { tasks: false });
    assert.equal(inline.result?.['content'][0]['text'], 'prepared once (inline)');
    assert.deepEqual(prepareCalls, [true, false]);
  });
});

