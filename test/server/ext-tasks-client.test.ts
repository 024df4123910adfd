// The demo driven over real HTTP by an independent client: @modelcontextprotocol/ext-tasks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { startMcpTasksHttp, type McpTasksHttp } from '../support/mcp-tasks-http.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { bodyMessages } from '../support/sse.js';

let demo: DemoServer;

before(async () => {
  demo = await startDemoServer({ port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'test', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined });
});
after(() => demo.close(1_000));

function rawDispatch(url: string) {
  let id = 1000;
  return async (request: { method: string; params?: Record<string, any> }, options?: { signal?: AbortSignal }) => {
    const p = request.params ?? {};
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': request.method,
    };
    if (request.method === 'tools/call') headers['mcp-name'] = p['name'];
    if (request.method.startsWith('tasks/')) headers['mcp-name'] = p['taskId'];
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: id++, ...request }), signal: options?.signal ?? null });
    let text = await res.text();
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const messages = bodyMessages(text);
      text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
    }
    const message = JSON.parse(text);
    return message.error ? { kind: 'error' as const, error: message.error } : { kind: 'result' as const, result: message.result };
  };
}

/** An ext-tasks session on `url` that declares form elicitation and accepts every elicitation with `content`. */
async function taskSession(url: string, content: Record<string, string | number | boolean>) {
  const clientInfo = { name: 'ext-tasks-test', version: '1' };
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const asked: string[] = [];
  const session = createTaskSessionFromClient(client as never, {
    endpointId: 'demo',
    rawDispatch: rawDispatch(url),
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities: { elicitation: { form: {} } } },
    onInputRequest: createApplicationInputHandler({
      elicitation: async (request: any) => {
        asked.push(request.params.message);
        return { action: 'accept', content };
      },
      sampling: async () => {
        throw new Error('no sampling here');
      },
      roots: async () => ({ roots: [] }),
    }),
  } as never);
  return {
    session,
    asked,
    async close() {
      await session.close();
      await client.close();
    },
  };
}

describe('an ext-tasks client against the demo', () => {
  it('completes a task whose elicitation it answers through tasks/update', async () => {
    const { session, asked, close } = await taskSession(demo.url, { confirm: true });
    try {
      const execution = await session.callTool('confirm_delete', { filename: 'report.pdf' }, { task: { preference: 'prefer' } } as never);
      assert.equal(execution.kind, 'task');
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as any;
      assert.deepEqual(asked, ['Delete report.pdf?']);
      assert.equal(result.content[0].text, 'Deleted report.pdf.');
    } finally {
      await close();
    }
  });

  it('cancels a running export, whose progress then stops changing', async () => {
    const created = await rpc(demo.url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 1000, delayMs: 20 } });
    const taskId = created.result!['taskId'] as string;
    await waitFor(demo.url, taskId, (task) => typeof task['statusMessage'] === 'string');
    const cancel = await rpc(demo.url, 'tasks/cancel', { taskId });
    assert.equal(cancel.result?.['resultType'], 'complete');
    const first = (await rpc(demo.url, 'tasks/get', { taskId })).result!;
    assert.equal(first['status'], 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = (await rpc(demo.url, 'tasks/get', { taskId })).result!;
    assert.equal(later['status'], 'cancelled');
    assert.equal(later['statusMessage'], first['statusMessage']);
    assert.equal(later['lastUpdatedAt'], first['lastUpdatedAt']);
    assert.match(String(first['statusMessage']), /^\d+\/1000$/);
  });
});

// The README's tool, as it reads now, and the elicitation it used to make (no requestedSchema),
// which the official client rejects: the task then waited for its whole TTL.
const readmeTools = [
  defineTool({
    name: 'publish',
    task: 'optional',
    input: z.object({ project: z.string() }),
    async execute({ project }, ctx) {
      const ok = await ctx.elicit('confirm', {
        message: `Publish ${project}?`,
        requestedSchema: { type: 'object', properties: { publish: { type: 'boolean' } }, required: ['publish'] },
      });
      const published = ok.action === 'accept' && ok.content?.['publish'] === true;
      return { content: [{ type: 'text', text: published ? `Published ${project}.` : `Kept ${project}.` }] };
    },
  }),
  defineTool({
    name: 'publish_without_schema',
    task: 'optional',
    input: z.object({ project: z.string() }),
    async execute({ project }, ctx) {
      const ok = await ctx.elicit('confirm', { message: `Publish ${project}?` } as never);
      return { content: [{ type: 'text', text: ok.action }] };
    },
  }),
];

describe('an ext-tasks client and the README\'s elicitation', () => {
  let server: McpTasksHttp;
  before(async () => {
    server = await startMcpTasksHttp({ pollIntervalMs: 50 }, readmeTools);
  });
  after(() => server?.close());

  it('answers the README-style elicitation and gets the result', async () => {
    const { session, asked, close } = await taskSession(server.url, { publish: true });
    try {
      const execution = await session.callTool('publish', { project: 'p' }, { task: { preference: 'prefer' } } as never);
      assert.equal(execution.kind, 'task');
      const { outcome } = await withTimeout(execution.settle(), 10_000);
      assert.deepEqual(asked, ['Publish p?']);
      assert.equal((resultFromTaskOutcome(outcome) as any).content[0].text, 'Published p.');
    } finally {
      await close();
    }
  });

  it('sees an elicitation without requestedSchema end the task at once with -32602, not wait for its TTL', async () => {
    const { session, asked, close } = await taskSession(server.url, { publish: true });
    try {
      const execution = await session.callTool('publish_without_schema', { project: 'p' }, { task: { preference: 'prefer' } } as never);
      assert.equal(execution.kind, 'task');
      const settled = await withTimeout(execution.settle().then((s: any) => s, (error: unknown) => ({ error })), 10_000);
      assert.deepEqual(asked, []);
      const failure = JSON.stringify(settled, (_k, v) => (v instanceof Error ? { ...v, name: v.name, message: v.message } : v));
      assert.match(failure, /-32602/);
      assert.match(failure, /requestedSchema is required/);
    } finally {
      await close();
    }
  });
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no outcome within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
