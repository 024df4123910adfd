// JavaScript cannot stop a function, but the books can be honest: a run that was aborted (a
// cancel, its node giving it up) and has not returned within `abortGraceMs` stops counting
// against `maxConcurrentRuns`, is counted and reported as a run that ignored its abort, and
// whatever it writes when it wakes stays refused.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { MemoryTaskStore, TaskRuntime, type TaskContext, type TaskExecute } from '@mcp-tasks/core';
import { losableNode } from './support/losable-node.js';

const GRACE_MS = 200;
const owner = () => ({ subject: `u-${randomUUID()}`, server: 'grace', clientId: 'c', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** Sleeps `ms` whatever its signal says, then tries to report progress and returns: a run that will not stop. */
function stubborn(ms: number, woke: () => void): TaskExecute<object> {
  return async (_args, ctx: TaskContext) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await ctx.progress(99, 100, 'late progress');
    woke();
    return text('late result');
  };
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a run that ignores its abort', () => {
  const store = new MemoryTaskStore();
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  after(() => store.close());

  test('gives its run slot back after the grace period: a queued task runs, the run is counted and reported, and its late writes are refused', async () => {
    const reported: unknown[] = [];
    const rt = new TaskRuntime({ store, nodeId: 'node-grace', maxConcurrentRuns: 1, abortGraceMs: GRACE_MS, pollIntervalMs: 50, telemetry: { meterProvider }, onError: (error) => reported.push(error) });
    let woke = false;
    const quick: TaskExecute<object> = async () => text('quick');
    const sleeper = stubborn(3_000, () => (woke = true));
    rt.registerTool('quick', { execute: quick as TaskExecute<never>, resumable: false });
    rt.registerTool('stubborn', { execute: sleeper as TaskExecute<never>, resumable: false });
    const held = await rt.start({ owner: owner(), tool: 'stubborn', args: {}, execute: sleeper });
    await until(() => rt.running === 1, 2_000, 'the stubborn task runs here');
    const queued = await rt.start({ owner: owner(), tool: 'quick', args: {}, execute: quick });
    assert.equal((await store.get(queued))?.nodeId, null, 'the second task waits for the only slot');
    const cancelledAt = Date.now();
    await rt.cancel(held);
    await until(async () => (await store.get(queued))?.status === 'completed', 2_000, 'the queued task ran in the slot the stubborn run gave back');
    assert.ok(Date.now() - cancelledAt >= GRACE_MS, 'not before the grace period');
    assert.equal(woke, false, 'the stubborn run is still asleep');
    assert.equal(rt.running, 0, 'it no longer counts as running here');
    assert.equal(reported.length, 1, 'reported once');
    assert.match(String((reported[0] as Error).message), /ignored its abort for 200 ms/);

    const { resourceMetrics } = await reader.collect();
    const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === 'mcp_tasks.runs.ignored_abort');
    const counted = points.flatMap((metric) => metric.dataPoints as Array<{ value: unknown }>).reduce((n, point) => n + (point.value as number), 0);
    assert.equal(counted, 1, 'counted once');
    await rt.close();
  });

  test('given up by its node, it writes nothing when it wakes, neither progress nor its result', async () => {
    const node = losableNode(store.events!, `node-${randomUUID()}`);
    const rt = new TaskRuntime({ store, node, abortGraceMs: GRACE_MS, onError: () => {} });
    let woke = false;
    const task = await rt.start({ owner: owner(), tool: 'stubborn', args: {}, execute: stubborn(600, () => (woke = true)) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    node.lose(task.taskId);
    await until(() => rt.running === 0, 2_000, 'the slot is given back');
    await until(() => woke, 3_000, 'the stubborn run wakes');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const row = await store.get(task);
    assert.deepEqual([row?.status, row?.statusMessage ?? null, row?.result], ['working', null, null], 'its late writes were refused');
    await rt.close();
  });

  test('abortGraceMs must be a non-negative integer', () => {
    assert.throws(() => new TaskRuntime({ store, abortGraceMs: -1 }), /abortGraceMs/);
    assert.throws(() => new TaskRuntime({ store, abortGraceMs: 1.5 }), /abortGraceMs/);
  });
});
