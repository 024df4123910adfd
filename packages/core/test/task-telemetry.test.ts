import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  JsonRpcError,
  MemoryTaskStore,
  TASK_RUN_CHANNEL,
  TASK_STATUS_CHANNEL,
  TaskRuntime,
  taskRunChannel,
  type DetailedTask,
  type TaskExecute,
  type TaskRef,
  type TaskRunMessage,
  type TaskStatusMessage,
} from '@mcp-tasks/core';

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const metricReader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
  exportIntervalMillis: 3_600_000,
});
const meterProvider = new MeterProvider({ readers: [metricReader] });
const contextManager = new AsyncLocalStorageContextManager();

const store = new MemoryTaskStore();
let runtime: TaskRuntime;

before(() => {
  context.setGlobalContextManager(contextManager.enable());
  runtime = new TaskRuntime({ store, nodeId: 'node-t', pollIntervalMs: 50, onError: () => {}, telemetry: { tracerProvider, meterProvider } });
});
after(async () => {
  await runtime.close();
  await store.close();
  context.disable();
});

/** A form elicitation with no fields: the smallest one the protocol accepts. */
const form = (message: string) => ({ message, requestedSchema: { type: 'object' as const, properties: {} } });
const owner = () => ({ subject: `u-${randomUUID()}`, server: 'telemetry-server', clientId: 'c', resource: '' });

async function settle(ref: TaskRef): Promise<DetailedTask> {
  for (let i = 0; i < 500; i += 1) {
    const task = await runtime.get(ref);
    if (['completed', 'failed', 'cancelled'].includes(task.status)) {
      // The end event and span follow the final write by a tick.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return task;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('task did not end');
}

/** Starts a task inside a `tools/call` span, as the MCP layer does, and returns both. */
async function startUnderRequestSpan(tool: string, execute: TaskExecute<object>) {
  const tracer = tracerProvider.getTracer('test');
  const requestSpan = tracer.startSpan(`tools/call ${tool}`);
  const record = await context.with(trace.setSpan(context.active(), requestSpan), () =>
    runtime.start({ owner: owner(), tool, args: {}, execute }),
  );
  requestSpan.end();
  return { record, requestSpan };
}

/** Subscribers for the run's tracing channel that keep a copy of each message, by event. */
function recordRunEvents() {
  const events: Array<[string, TaskRunMessage]> = [];
  const handlers = {
    start: (m: TaskRunMessage) => events.push(['start', { ...m }]),
    end: (m: TaskRunMessage) => events.push(['end', { ...m }]),
    error: (m: TaskRunMessage) => events.push(['error', { ...m }]),
    asyncStart: () => {},
    asyncEnd: () => {},
  };
  return { events, handlers };
}

describe('diagnostics_channel events', () => {
  test('start and end carry task id, tool, server and the final status', async () => {
    const { events, handlers } = recordRunEvents();
    const statuses: TaskStatusMessage[] = [];
    const onStatus = (m: unknown) => statuses.push(m as TaskStatusMessage);
    taskRunChannel.subscribe(handlers);
    diagnosticsChannel.subscribe(TASK_STATUS_CHANNEL, onStatus);
    try {
      const { record } = await startUnderRequestSpan('greet', async (_a, ctx) => {
        await ctx.elicit('name', form('Name?'));
        return { content: [] };
      });
      await waitUntil(async () => (await runtime.get(record)).status === 'input_required');
      await runtime.update(record, { name: { action: 'accept', content: {} } });
      await settle(record);
      const mine = events.filter(([, m]) => m.taskId === record.taskId);
      assert.deepEqual(mine.map(([kind]) => kind), ['start', 'end']);
      assert.deepEqual(mine[0]![1], { taskId: record.taskId, tool: 'greet', server: 'telemetry-server', nodeId: 'node-t' });
      assert.equal(mine[1]![1].status, 'completed');
      assert.deepEqual(
        statuses.filter((m) => m.taskId === record.taskId).map((m) => m.status),
        ['working', 'input_required', 'working', 'completed'],
      );
    } finally {
      taskRunChannel.unsubscribe(handlers);
      diagnosticsChannel.unsubscribe(TASK_STATUS_CHANNEL, onStatus);
    }
  });

  test('a tool that throws publishes error, then end with failed and the JSON-RPC error', async () => {
    const { events, handlers } = recordRunEvents();
    taskRunChannel.subscribe(handlers);
    try {
      const thrown = new JsonRpcError(-32001, 'upstream is down');
      const { record } = await startUnderRequestSpan('failing_job', async () => {
        throw thrown;
      });
      await settle(record);
      const mine = events.filter(([, m]) => m.taskId === record.taskId);
      assert.deepEqual(mine.map(([kind]) => kind), ['start', 'error', 'end']);
      assert.equal(mine[1]![1].error, thrown);
      assert.equal(mine[2]![1].status, 'failed');
      assert.deepEqual(mine[2]![1].rpcError, { code: -32001, message: 'upstream is down' });
    } finally {
      taskRunChannel.unsubscribe(handlers);
    }
  });

  test('nothing is published when nobody subscribes', async () => {
    assert.equal(taskRunChannel.hasSubscribers, false);
    assert.equal(diagnosticsChannel.channel(TASK_STATUS_CHANNEL).hasSubscribers, false);
    const channels = [taskRunChannel.start, taskRunChannel.end, taskRunChannel.error, diagnosticsChannel.channel(TASK_STATUS_CHANNEL)];
    const originals = channels.map((c) => c.publish);
    for (const c of channels) {
      c.publish = () => {
        throw new Error(`published on ${String(c.name)} without subscribers`);
      };
    }
    try {
      const { record } = await startUnderRequestSpan('quiet', async () => {
        throw new JsonRpcError(-32002, 'x');
      });
      const task = await settle(record);
      assert.equal(task.status, 'failed');
      assert.equal(TASK_RUN_CHANNEL, 'mcp-tasks:task');
    } finally {
      channels.forEach((c, i) => (c.publish = originals[i]!));
    }
  });
});

describe('OpenTelemetry', () => {
  test('the run is an execute_tool span, child of the tools/call span, even after the request ended', async () => {
    spans.reset();
    const { record, requestSpan } = await startUnderRequestSpan('slow_compute', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const inner = tracerProvider.getTracer('tool').startSpan('inner work');
      inner.end();
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    await settle(record);
    const run = spans.getFinishedSpans().find((s) => s.name === 'execute_tool slow_compute');
    assert.ok(run, 'execute_tool span exported');
    assert.equal(run.parentSpanContext?.spanId, requestSpan.spanContext().spanId);
    assert.equal(run.spanContext().traceId, requestSpan.spanContext().traceId);
    assert.equal(run.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(run.attributes['gen_ai.tool.name'], 'slow_compute');
    assert.equal(run.attributes['mcp.task.id'], record.taskId);
    assert.equal(run.attributes['mcp.task.status'], 'completed');
    assert.equal(run.status.code, SpanStatusCode.OK);
    const inner = spans.getFinishedSpans().find((s) => s.name === 'inner work');
    assert.equal(inner?.parentSpanContext?.spanId, run.spanContext().spanId, "the tool's own spans nest under execute_tool");
  });

  test('status and errors are recorded: tool error, JSON-RPC failure, cancellation', async () => {
    spans.reset();
    const toolError = await startUnderRequestSpan('tool_error', async () => ({ content: [], isError: true }));
    const rpcFailure = await startUnderRequestSpan('rpc_failure', async () => {
      throw new JsonRpcError(-32050, 'no quota upstream');
    });
    const cancelled = await startUnderRequestSpan('cancelled_job', async (_a, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      return { content: [] };
    });
    await runtime.cancel(cancelled.record);
    for (const { record } of [toolError, rpcFailure, cancelled]) await settle(record);
    const byName = (name: string) => spans.getFinishedSpans().find((s) => s.name === `execute_tool ${name}`)!;
    assert.equal(byName('tool_error').attributes['error.type'], 'tool_error');
    assert.equal(byName('tool_error').status.code, SpanStatusCode.ERROR);
    assert.equal(byName('rpc_failure').attributes['error.type'], '-32050');
    assert.equal(byName('rpc_failure').attributes['mcp.task.status'], 'failed');
    assert.equal(byName('rpc_failure').status.code, SpanStatusCode.ERROR);
    assert.equal(byName('rpc_failure').events.some((e) => e.name === 'exception'), true);
    assert.equal(byName('cancelled_job').attributes['mcp.task.status'], 'cancelled');
    assert.equal(byName('cancelled_job').status.code, SpanStatusCode.UNSET);
  });

  test('metrics count created, finished by status, running, durations, input waits and quota refusals', async () => {
    const limited = new TaskRuntime({ store, nodeId: 'node-q', maxPerPrincipal: 1, telemetry: { meterProvider } });
    const me = owner();
    await limited.start({ owner: me, tool: 'hold', args: {}, execute: async (_a, ctx) => (await new Promise((r) => ctx.signal.addEventListener('abort', r)), { content: [] }) });
    await assert.rejects(limited.start({ owner: me, tool: 'hold', args: {}, execute: async () => ({ content: [] }) }));
    const { resourceMetrics } = await metricReader.collect();
    const points = new Map<string, Array<{ attributes: Record<string, unknown>; value: unknown }>>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) points.set(metric.descriptor.name, metric.dataPoints as never);
    }
    const sum = (name: string, filter: (a: Record<string, unknown>) => boolean = () => true) =>
      (points.get(name) ?? []).filter((p) => filter(p.attributes)).reduce((n, p) => n + (typeof p.value === 'number' ? p.value : 0), 0);
    assert.ok(sum('mcp_tasks.created') >= 7);
    assert.ok(sum('mcp_tasks.finished', (a) => a['mcp.task.status'] === 'completed') >= 3);
    assert.ok(sum('mcp_tasks.finished', (a) => a['mcp.task.status'] === 'cancelled') >= 1);
    assert.equal(sum('mcp_tasks.running', (a) => a['mcp_tasks.node.id'] === 'node-q'), 1);
    assert.ok(sum('mcp_tasks.input.waits') >= 1);
    assert.equal(sum('mcp_tasks.quota.refusals'), 1);
    assert.ok(points.get('mcp_tasks.run.duration_seconds')?.length);
    assert.ok(points.get('mcp_tasks.cancel.delivery_seconds')?.length, 'a cancel delivery latency was recorded');
    await limited.close();
  });
});

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not met');
}
