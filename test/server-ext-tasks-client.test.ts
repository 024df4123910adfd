// The demo driven over real HTTP by an independent client: @modelcontextprotocol/ext-tasks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { rpc, waitFor } from './server-raw-client.js';

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
      const messages = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
    }
    const message = JSON.parse(text);
    return message.error ? { kind: 'error' as const, error: message.error } : { kind: 'result' as const, result: message.result };
  };
}

describe('an ext-tasks client against the demo', () => {
  it('completes a task whose elicitation it answers through tasks/update', async () => {
    const clientInfo = { name: 'ext-tasks-test', version: '1' };
    const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } } as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(demo.url)));
    const asked: string[] = [];
    const session = createTaskSessionFromClient(client as never, {
      endpointId: 'demo',
      rawDispatch: rawDispatch(demo.url),
      v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities: { elicitation: { form: {} } } },
      onInputRequest: createApplicationInputHandler({
        elicitation: async (request: any) => {
          asked.push(request.params.message);
          return { action: 'accept', content: { confirm: true } };
        },
        sampling: async () => {
          throw new Error('no sampling here');
        },
        roots: async () => ({ roots: [] }),
      }),
    } as never);
    try {
      const execution = await session.callTool('confirm_delete', { filename: 'report.pdf' }, { task: { preference: 'prefer' } } as never);
      assert.equal(execution.kind, 'task');
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as any;
      assert.deepEqual(asked, ['Delete report.pdf?']);
      assert.equal(result.content[0].text, 'Deleted report.pdf.');
    } finally {
      await session.close();
      await client.close();
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
