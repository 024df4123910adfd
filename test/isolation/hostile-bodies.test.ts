// Bodies that used to slip past the edge's checks: JSON-RPC batches (removed from MCP in
// 2025-06-18) on both revisions, and JSON nested far deeper than any request needs. Each is
// refused with one clear sentence before anything is parsed deeper, answered or stored, on the
// demo node (its own edge) and on a library host's `McpTasks.handler`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineTool, MAX_JSON_DEPTH, McpTasks } from '@mcp-tasks/server';
import * as z from 'zod';
import { spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { bodyMessages } from '../support/sse.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'attacker', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

function headers(revision: '2026-07-28' | '2025-11-25', method = 'tools/call', name = 'slow_compute'): Record<string, string> {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': revision };
  return revision === '2026-07-28' ? { ...base, 'mcp-method': method, 'mcp-name': name } : base;
}

/** The JSON-RPC message of an answer, JSON or the last SSE `data:` line. */
function messageOf(text: string): { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } {
  return bodyMessages(text).at(-1);
}

const call2026 = (id: number, name = 'slow_compute') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { seconds: 0 }, _meta: META } });
const call2025 = (id: number, name = 'slow_compute') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { seconds: 0 }, task: {} } });
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('hostile bodies on a demo node', { timeout: 90_000 }, () => {
  let node: DemoProcess;
  before(async () => {
    node = await spawnDemoNode('hostile-bodies', { DATABASE_URL: '', MCP_TASKS_RATE_LIMIT: 'off' });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
  });

  async function post(revision: '2026-07-28' | '2025-11-25', body: string): Promise<{ status: number; text: string }> {
    const res = await fetch(node.url, { method: 'POST', headers: headers(revision), body, signal: AbortSignal.timeout(20_000) });
    return { status: res.status, text: await res.text() };
  }

  describe('JSON-RPC batches', () => {
    it('a batch is refused on both revisions with -32600 and HTTP 400, and creates no task', async () => {
      for (const [revision, batch] of [
        ['2025-11-25', [call2025(1), call2025(2), call2025(3)]],
        ['2026-07-28', [call2026(1), call2026(2)]],
      ] as const) {
        const reply = await post(revision, JSON.stringify(batch));
        assert.equal(reply.status, 400, `${revision}: ${reply.text}`);
        const message = messageOf(reply.text);
        assert.equal(message.error?.code, -32600, `${revision}: ${reply.text}`);
        assert.match(message.error!.message, /batch/i);
        assert.doesNotMatch(reply.text, /"task"|taskId/);
      }
    });

    it('a batch does not skip the body checks: a tool name with newlines is not echoed', async () => {
      const name = `x\nFORGED LOG LINE\n${'y'.repeat(100_000)}`;
      const reply = await post('2025-11-25', JSON.stringify([call2025(1, name)]));
      assert.equal(reply.status, 400);
      assert.ok(reply.text.length < 300, `answer of ${reply.text.length} characters`);
      assert.doesNotMatch(reply.text, /FORGED/);
    });
  });

  describe('nesting depth', () => {
    for (const revision of ['2026-07-28', '2025-11-25'] as const) {
      for (const where of ['arguments', '_meta'] as const) {
        it(`${revision}: JSON nested 100 000 deep in ${where} is a -32700 that says so, not a 500 nor a stack overflow`, async () => {
          const params =
            where === 'arguments'
              ? `{"name":"slow_compute","arguments":{"seconds":0,"x":${nested(100_000)}}${revision === '2026-07-28' ? `,"_meta":${JSON.stringify(META)}` : ''}}`
              : `{"name":"slow_compute","arguments":{"seconds":0},"_meta":${JSON.stringify({ ...META, x: 0 }).replace('"x":0', `"x":${nested(100_000)}`)}}`;
          const reply = await post(revision, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`);
          assert.equal(reply.status, 400, reply.text);
          const message = messageOf(reply.text);
          assert.equal(message.error?.code, -32700, reply.text);
          assert.equal(message.error?.message, `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
        });
      }
    }

    it('nesting a task can hold (the store keeps values 64 deep) is served as before', async () => {
      const reply = await post('2026-07-28', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"x":${nested(60)}},"_meta":${JSON.stringify(META)}}}`);
      assert.equal(reply.status, 200, reply.text);
      assert.equal(messageOf(reply.text).result?.['resultType'], 'task', reply.text);
    });

    it('none of these wrote a stack to the log', async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.doesNotMatch(node.output(), /Maximum call stack|RangeError|request failed|\n\s+at /);
    });
  });
});

describe('hostile bodies on a library host (McpTasks.handler)', { timeout: 30_000 }, () => {
  const tasks = new McpTasks({ rateLimit: false });
  const handler = tasks.handler({
    name: 'lib',
    version: '1.0.0',
    tools: [defineTool({ name: 'echo', task: 'optional', input: z.object({ x: z.unknown().optional() }), execute: async () => ({ content: [] }) })],
  });
  after(async () => {
    await handler.close();
    await tasks.close();
  });
  const request = (revision: '2026-07-28' | '2025-11-25', body: string) =>
    new Request('http://localhost/mcp', { method: 'POST', headers: headers(revision, 'tools/call', 'echo'), body });

  it('a batch is refused with -32600 and HTTP 400 on both revisions', async () => {
    for (const revision of ['2025-11-25', '2026-07-28'] as const) {
      const batch = revision === '2025-11-25' ? [call2025(1, 'echo')] : [call2026(1, 'echo')];
      const response = await handler.fetch(request(revision, JSON.stringify(batch)));
      assert.equal(response.status, 400, revision);
      assert.equal(messageOf(await response.text()).error?.code, -32600, revision);
    }
  });

  it('deep JSON text is a -32700, and a deep parsed body a -32602, before the SDK sees either', async () => {
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":${nested(100_000)}},"_meta":${JSON.stringify(META)}}}`;
    const fromText = await handler.fetch(request('2026-07-28', text));
    assert.equal(fromText.status, 400);
    assert.deepEqual(messageOf(await fromText.text()).error, { code: -32700, message: `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels` });
    const fromParsed = await handler.fetch(request('2026-07-28', text), { parsedBody: JSON.parse(text) });
    assert.equal(fromParsed.status, 400);
    assert.deepEqual(messageOf(await fromParsed.text()).error, { code: -32602, message: `Invalid params: JSON nested deeper than ${MAX_JSON_DEPTH} levels` });
    const direct = await handler.serveDirect({ method: 'POST', header: (name) => headers('2026-07-28', 'tools/call', 'echo')[name], body: JSON.parse(text), bodyBytes: text.length, toRequest: () => request('2026-07-28', text) });
    assert.equal(direct, undefined, 'the direct path leaves the refusal to fetch');
  });
});
