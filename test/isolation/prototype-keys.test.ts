// Keys a client chooses that name what every JavaScript object inherits (`constructor`,
// `__proto__`, `toString`, …) are looked up as the client's keys only: an owner's 2025-11-25 bare
// answer keyed so, a tool called so, or answers keyed so, are answered like any unknown key,
// never with a 500 or an internal error, and change nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineTool, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';
import { legacyRpc, postAnswer } from '../support/legacy-client.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { bodyMessages } from '../support/sse.js';

const KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: { form: {} } },
};

async function post2026(url: string, method: string, name: string, params: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: bodyMessages(text).at(-1) };
}

describe('prototype keys', { timeout: 90_000 }, () => {
  let node: DemoProcess;
  before(async () => {
    node = await spawnDemoNode('prototype-keys', { DATABASE_URL: '', MCP_TASKS_RATE_LIMIT: 'off' });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
  });

  it("an owner's 2025-11-25 bare answer keyed by an inherited name is accepted as unknown (202) and changes nothing", async () => {
    const created = await legacyRpc(node.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'p.txt' }, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await eventually(async () => (await legacyRpc(node.url, 'tasks/get', { taskId })).result?.['status'] === 'input_required', 10_000, 'input_required');
    for (const key of KEYS) {
      const id = `mcp-tasks.input.${taskId}.${Buffer.from(key).toString('base64url')}`;
      assert.equal(await postAnswer(node.url, { id, error: { code: -1, message: 'no' } }), 202, `error answer keyed ${key}`);
      assert.equal(await postAnswer(node.url, { id, result: { action: 'accept', content: {} } }), 202, `result answer keyed ${key}`);
    }
    assert.equal((await legacyRpc(node.url, 'tasks/get', { taskId })).result?.['status'], 'input_required');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.doesNotMatch(node.output(), /TypeError|request failed/);
  });

  it('a tool called by an inherited name is an unknown tool on both revisions', async () => {
    for (const name of KEYS) {
      const modern = await post2026(node.url, 'tools/call', name, { name, arguments: {} });
      assert.notEqual(modern.status, 500, `${name}: ${JSON.stringify(modern.body)}`);
      assert.ok([-32602, -32601].includes(modern.body.error?.code), `${name}: ${JSON.stringify(modern.body)}`);
      const legacy = await legacyRpc(node.url, 'tools/call', { name, arguments: {} });
      assert.equal(legacy.status, 200, name);
      assert.ok([-32602, -32601].includes(legacy.error?.code ?? 0), `${name}: ${JSON.stringify(legacy)}`);
    }
  });

  it('answers keyed by inherited names are ignored like unknown keys, inline and for a task', async () => {
    const created = await post2026(node.url, 'tools/call', 'confirm_delete', { name: 'confirm_delete', arguments: { filename: 'q.txt' } });
    const taskId = created.body.result.taskId as string;
    const junk = Object.fromEntries(KEYS.map((key) => [key, { action: 'accept', content: { confirm: true } }]));
    // JSON text: `__proto__` arrives as an own key, as from any client.
    const update = await post2026(node.url, 'tasks/update', taskId, { taskId, inputResponses: junk });
    assert.equal(update.status, 200, JSON.stringify(update.body));
    assert.equal(update.body.error, undefined, JSON.stringify(update.body));
    const task = await post2026(node.url, 'tasks/get', taskId, { taskId });
    assert.notEqual(task.body.result?.status, 'completed');
    const inline = await post2026(node.url, 'tools/call', 'greet', { name: 'greet', arguments: { name: 'x' }, inputResponses: junk });
    assert.notEqual(inline.status, 500, JSON.stringify(inline.body));
    assert.notEqual(inline.body.error?.code, -32603, JSON.stringify(inline.body));
  });
});

describe('prototype keys on the SDK path of a library host (directTasks: false)', { timeout: 30_000 }, () => {
  const tasks = new McpTasks({ rateLimit: false });
  const handler = tasks.handler({
    name: 'lib',
    version: '1.0.0',
    directTasks: false,
    tools: [
      defineTool({
        name: 'ask',
        task: 'optional',
        input: z.object({}),
        async execute(_args, ctx) {
          await ctx.elicit('k', { message: 'k?', requestedSchema: { type: 'object', properties: {} } });
          return { content: [] };
        },
      }),
    ],
  });
  after(async () => {
    await handler.close();
    await tasks.close();
  });

  it('a tasks/update whose answers include `__proto__` and `constructor` is acknowledged, the keys ignored', async () => {
    const post = async (method: string, name: string, params: Record<string, unknown>) => {
      const response = await handler.fetch(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
        }),
      );
      const text = await response.text();
      return bodyMessages(text).at(-1);
    };
    const taskId = (await post('tools/call', 'ask', { name: 'ask', arguments: {} })).result.taskId as string;
    const junk = JSON.parse('{"__proto__":{"action":"accept","content":{}},"constructor":{"action":"accept","content":{}}}');
    const update = await post('tasks/update', taskId, { taskId, inputResponses: junk });
    assert.equal(update.error, undefined, JSON.stringify(update));
  });
});
