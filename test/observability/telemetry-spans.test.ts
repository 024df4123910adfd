// The MCP request spans over real HTTP: tools/call and tasks/* SERVER spans from McpTasks, the
// execute_tool span of the task run as the child of the tools/call that created it, and a
// client's trace context in params._meta continued.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defineTool } from '@mcp-tasks/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { startMcpTasksHttp, type McpTasksHttp } from '../support/mcp-tasks-http.js';
import { envelope, post, rpc, waitFor } from '../support/server-raw-client.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

const tools = [
  defineTool({ name: 'echo', task: 'optional', input: z.object({ text: z.string() }), execute: ({ text: t }) => text(t) }),
  defineTool({ name: 'broken', task: 'optional', input: z.object({}), execute: () => ({ ...text('the upstream said no'), isError: true }) }),
  defineTool({
    name: 'rpc_fail',
    task: 'required',
    input: z.object({}),
    execute: () => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'the job hit a wall');
    },
  }),
  defineTool({
    name: 'wait_cancel',
    task: 'required',
    input: z.object({}),
    async execute(_args, ctx) {
      await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve())));
      return text('stopped');
    },
  }),
];

let server: McpTasksHttp;

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  server = await startMcpTasksHttp({ pollIntervalMs: 50, telemetry: { tracerProvider } }, tools);
});
after(async () => {
  await server.close();
  context.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Waits until the run's execute_tool span ended (it ends a tick after the final write). */
async function executeSpan(taskId: string): Promise<ReadableSpan> {
  for (let i = 0; i < 400; i += 1) {
    const found = spans().find((span) => span.name.startsWith('execute_tool') && span.attributes['mcp.task.id'] === taskId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no execute_tool span for ${taskId}`);
}

async function createTask(name: string, args: Record<string, unknown> = {}): Promise<string> {
  const reply = await rpc(server.url, 'tools/call', { name, arguments: args });
  assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply));
  return reply.result!['taskId'] as string;
}

describe('tools/call that creates a task', () => {
  it('is a SERVER span named after the tool, with the MCP attributes and the created task', async () => {
    const taskId = await createTask('echo', { text: 'hi' });
    const [call] = named('tools/call echo');
    assert.ok(call, `spans: ${spans().map((s) => s.name).join(', ')}`);
    assert.equal(call.kind, SpanKind.SERVER);
    assert.equal(call.attributes['mcp.method.name'], 'tools/call');
    assert.equal(call.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(call.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.match(String(call.attributes['jsonrpc.request.id']), /^\d+$/);
    assert.equal(call.attributes['mcp.protocol.version'], '2026-07-28');
    assert.equal(call.attributes['mcp.task.id'], taskId);
    assert.equal(call.attributes['mcp.task.status'], 'working');
    assert.equal(call.attributes['error.type'], undefined);
    // Success leaves a server span's status unset (the conventions reserve OK for explicit configuration).
    assert.equal(call.status.code, SpanStatusCode.UNSET);
  });

  it('is the parent of the execute_tool span of the run, in the same trace, although the run outlives it', async () => {
    const taskId = await createTask('echo', { text: 'child' });
    const run = await executeSpan(taskId);
    const call = named('tools/call echo').find((span) => span.attributes['mcp.task.id'] === taskId)!;
    assert.equal(run.name, 'execute_tool echo');
    assert.equal(run.spanContext().traceId, call.spanContext().traceId);
    assert.equal(parentId(run), call.spanContext().spanId);
    assert.equal(run.attributes['mcp.task.status'], 'completed');
    assert.equal(run.status.code, SpanStatusCode.OK);
  });

  it('a tool error result (isError) marks the execute_tool span tool_error', async () => {
    const taskId = await createTask('broken');
    const run = await executeSpan(taskId);
    assert.equal(run.attributes['error.type'], 'tool_error');
    assert.equal(run.status.code, SpanStatusCode.ERROR);
  });

  it('a JSON-RPC error thrown by the tool fails the task and the execute_tool span with its code', async () => {
    const taskId = await createTask('rpc_fail');
    const run = await executeSpan(taskId);
    assert.equal(run.attributes['mcp.task.status'], 'failed');
    assert.equal(run.attributes['error.type'], '-32603');
    assert.equal(run.status.code, SpanStatusCode.ERROR);
    assert.equal(parentId(run), named('tools/call rpc_fail')[0]?.spanContext().spanId);
  });

  it('a cancelled run ends its execute_tool span cancelled; tasks/cancel has its own span', async () => {
    const taskId = await createTask('wait_cancel');
    await waitFor(server.url, taskId, (task) => task['status'] === 'working');
    const cancel = await rpc(server.url, 'tasks/cancel', { taskId });
    assert.equal(cancel.error, undefined);
    const run = await executeSpan(taskId);
    assert.equal(run.attributes['mcp.task.status'], 'cancelled');
    assert.notEqual(run.status.code, SpanStatusCode.ERROR);
    const [cancelSpan] = named('tasks/cancel');
    assert.ok(cancelSpan);
    assert.equal(cancelSpan.kind, SpanKind.SERVER);
    assert.equal(cancelSpan.attributes['mcp.method.name'], 'tasks/cancel');
    assert.equal(cancelSpan.attributes['mcp.task.id'], taskId);
    assert.equal(cancelSpan.attributes['gen_ai.tool.name'], undefined);
    assert.equal(cancelSpan.attributes['gen_ai.operation.name'], undefined);
  });
});

describe('tools/call answered inline', () => {
  it('a tool error result is error.type tool_error with status ERROR', async () => {
    const reply = await rpc(server.url, 'tools/call', { name: 'broken', arguments: {} }, { tasks: false });
    assert.equal(reply.result?.['isError'], true);
    const [call] = named('tools/call broken');
    assert.equal(call?.attributes['error.type'], 'tool_error');
    assert.equal(call?.status.code, SpanStatusCode.ERROR);
    assert.equal(call?.attributes['mcp.task.id'], undefined);
  });
});

describe('JSON-RPC failures', () => {
  it('invalid arguments: error.type and rpc.response.status_code are -32602, status ERROR with the message', async () => {
    const reply = await rpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 42 } });
    assert.equal(reply.error?.code, -32602);
    const [call] = named('tools/call echo');
    assert.equal(call?.attributes['error.type'], '-32602');
    assert.equal(call?.attributes['rpc.response.status_code'], '-32602');
    assert.equal(call?.status.code, SpanStatusCode.ERROR);
    assert.equal(call?.status.message, reply.error?.message);
  });

  it('a required tool without the extension: -32021', async () => {
    const reply = await rpc(server.url, 'tools/call', { name: 'wait_cancel', arguments: {} }, { tasks: false });
    assert.equal(reply.error?.code, -32021);
    assert.equal(named('tools/call wait_cancel')[0]?.attributes['error.type'], '-32021');
  });

  it('tasks/get of an unknown task: span tasks/get with the id and -32602', async () => {
    const reply = await rpc(server.url, 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal(reply.error?.code, -32602);
    const [get] = named('tasks/get');
    assert.equal(get?.kind, SpanKind.SERVER);
    assert.equal(get?.attributes['mcp.task.id'], 'AAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(get?.attributes['error.type'], '-32602');
    assert.equal(get?.status.code, SpanStatusCode.ERROR);
  });

  it('tasks/get of a live task records its status', async () => {
    const taskId = await createTask('wait_cancel');
    exporter.reset();
    await rpc(server.url, 'tasks/get', { taskId });
    const [get] = named('tasks/get');
    assert.equal(get?.attributes['mcp.task.id'], taskId);
    assert.equal(get?.attributes['mcp.task.status'], 'working');
    assert.equal(get?.status.code, SpanStatusCode.UNSET);
    await rpc(server.url, 'tasks/cancel', { taskId });
  });
});

describe('trace context from the client', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const clientSpanId = '00f067aa0ba902b7';

  async function callWithMeta(meta: Record<string, unknown>) {
    const body = {
      jsonrpc: '2.0',
      id: 'traced-1',
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'traced' }, _meta: { ...envelope(true), ...meta } },
    };
    return post(server.url, JSON.stringify(body), {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
    });
  }

  it('a traceparent in params._meta makes tools/call a child of the client span, and the run follows', async () => {
    const reply = await callWithMeta({ traceparent: `00-${traceId}-${clientSpanId}-01`, tracestate: 'rojo=00f067aa0ba902b7' });
    const taskId = reply.result?.['taskId'] as string;
    assert.ok(taskId, JSON.stringify(reply));
    const [call] = named('tools/call echo');
    assert.equal(call?.spanContext().traceId, traceId);
    assert.equal(parentId(call!), clientSpanId);
    assert.equal(call?.parentSpanContext?.isRemote, true);
    assert.equal(call?.spanContext().traceState?.get('rojo'), '00f067aa0ba902b7');
    assert.equal(call?.attributes['jsonrpc.request.id'], 'traced-1');
    const run = await executeSpan(taskId);
    assert.equal(run.spanContext().traceId, traceId);
    assert.equal(parentId(run), call?.spanContext().spanId);
  });

  it('a malformed traceparent is ignored: a new trace starts', async () => {
    await callWithMeta({ traceparent: 'not-a-traceparent' });
    const [call] = named('tools/call echo');
    assert.ok(call);
    assert.notEqual(call.spanContext().traceId, traceId);
    assert.equal(call.parentSpanContext, undefined);
  });
});
