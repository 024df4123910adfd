// Request spans of the 2025-11-25 tasks/* this project serves in front of the SDK: the same
// SERVER spans, names and attributes as a 2026-07-28 client's requests get.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defineTool, McpTasks, type McpTasksHandler } from '@mcp-tasks/server';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import * as z from 'zod';
import { legacyRpc } from '../support/legacy-client.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const quick = defineTool({
  name: 'quick',
  task: 'required',
  input: z.object({}),
  execute: async () => ({ content: [{ type: 'text', text: 'done' }] }),
});

describe('2025-11-25 tasks/* request spans', { timeout: 30_000 }, () => {
  let tasks: McpTasks;
  let handler: McpTasksHandler;
  let http: Server | undefined;
  let url: string;

  before(async () => {
    tasks = new McpTasks({ pollIntervalMs: 50, telemetry: { tracerProvider } });
    handler = tasks.handler({ name: 'spans', version: '1.0.0', tools: [quick] });
    ({ http, url } = await serveOnLoopback(handler));
  });

  after(async () => {
    await closeLoopback(http);
    await handler?.close();
    await tasks?.close();
  });

  it('tasks/get and tasks/cancel of a 2025-11-25 client are SERVER spans with the task id and that revision', async () => {
    const created = await legacyRpc(url, 'tools/call', { name: 'quick', arguments: {}, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    exporter.reset();
    assert.equal((await legacyRpc(url, 'tasks/get', { taskId })).status, 200);
    const unknown = await legacyRpc(url, 'tasks/cancel', { taskId: 'A'.repeat(24) });
    assert.equal(unknown.error?.code, -32602);
    const spans = exporter.getFinishedSpans();
    const get = spans.find((span) => span.name === 'tasks/get');
    assert.ok(get, `spans: ${spans.map((span) => span.name).join(', ')}`);
    assert.equal(get.attributes['mcp.task.id'], taskId);
    assert.equal(get.attributes['mcp.protocol.version'], '2025-11-25');
    assert.equal(get.attributes['jsonrpc.request.id'], '1');
    const cancel = spans.find((span) => span.name === 'tasks/cancel');
    assert.ok(cancel, 'tasks/cancel has its span');
  });
});
