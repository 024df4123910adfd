// A run that ends without ending its task (parked for an answer, handed over by a drain, left by a
// close) is not a finished task: `mcp_tasks.finished` counts terminal ends only, and such runs are
// counted apart, by how they ended, so `mcp_tasks_finished_total{status="input_required"}` never
// appears.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { MemoryTaskStore, TaskRuntime, type TaskContext, type TaskExecute } from '@mcp-tasks/core';

const metricReader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
  exportIntervalMillis: 3_600_000,
});
const meterProvider = new MeterProvider({ readers: [metricReader] });
const store = new MemoryTaskStore();
after(() => store.close());

const owner = () => ({ subject: `u-${randomUUID()}`, server: 'unfinished', clientId: 'c', resource: '' });
const untilAborted: TaskExecute<object> = async (_args, ctx: TaskContext) => {
  await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  return { content: [] };
};
const asks: TaskExecute<object> = async (_args, ctx: TaskContext) => {
  await ctx.elicit('go', { message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
  return { content: [] };
};

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function points(): Promise<Map<string, Array<{ attributes: Record<string, unknown>; value: unknown }>>> {
  const { resourceMetrics } = await metricReader.collect();
  const byName = new Map<string, Array<{ attributes: Record<string, unknown>; value: unknown }>>();
  for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric.dataPoints as never);
  return byName;
}

test('a parked, a handed-over and a left run are counted as unfinished runs, never as finished tasks', async () => {
  // Parked: a resumable task whose tool this node can claim again gives its slot back while it waits.
  const parking = new TaskRuntime({ store, nodeId: 'node-park', telemetry: { meterProvider }, onError: () => {} });
  parking.registerTool('ask', { execute: asks as TaskExecute<never>, resumable: true });
  const parked = await parking.start({ owner: owner(), tool: 'ask', args: {}, execute: asks, resumable: true });
  await until(async () => parking.running === 0 && (await store.get(parked))?.status === 'input_required', 'the run parked');

  // Handed over: a drain releases a resumable running task for another node.
  const draining = new TaskRuntime({ store, nodeId: 'node-drain', telemetry: { meterProvider }, onError: () => {} });
  const handedOver = await draining.start({ owner: owner(), tool: 'hold', args: {}, execute: untilAborted, resumable: true });
  await until(() => draining.running === 1, 'the run started');
  await draining.drain(0);
  assert.deepEqual([(await store.get(handedOver))?.status, (await store.get(handedOver))?.nodeId], ['working', null], 'handed over');

  // Left: a close without a drain leaves the task for the lease.
  const closing = new TaskRuntime({ store, nodeId: 'node-close', telemetry: { meterProvider }, onError: () => {} });
  const left = await closing.start({ owner: owner(), tool: 'hold', args: {}, execute: untilAborted });
  await until(() => closing.running === 1, 'the run started');
  await closing.close();
  assert.equal((await store.get(left))?.status, 'working', 'left as it was');
  await parking.close();
  // The run's end is reported a tick after its last read.
  await new Promise((resolve) => setTimeout(resolve, 50));

  const all = await points();
  const sum = (name: string, filter: (a: Record<string, unknown>) => boolean = () => true) =>
    (all.get(name) ?? []).filter((p) => filter(p.attributes)).reduce((n, p) => n + (typeof p.value === 'number' ? p.value : 0), 0);
  const finishedStatuses = (all.get('mcp_tasks.finished') ?? []).map((p) => p.attributes['mcp.task.status']);
  assert.deepEqual(finishedStatuses.filter((status) => status === 'input_required' || status === 'working'), [], 'no run that left its task live is counted finished');
  assert.equal(sum('mcp_tasks.runs.unfinished', (a) => a['mcp_tasks.node.id'] === 'node-park' && a['mcp_tasks.run.end'] === 'parked'), 1);
  assert.equal(sum('mcp_tasks.runs.unfinished', (a) => a['mcp_tasks.node.id'] === 'node-drain' && a['mcp_tasks.run.end'] === 'released'), 1);
  assert.equal(sum('mcp_tasks.runs.unfinished', (a) => a['mcp_tasks.node.id'] === 'node-close' && a['mcp_tasks.run.end'] === 'left'), 1);
  for (const nodeId of ['node-park', 'node-drain', 'node-close']) {
    assert.equal(sum('mcp_tasks.running', (a) => a['mcp_tasks.node.id'] === nodeId), 0, `no run is counted running on ${nodeId}`);
  }
});
