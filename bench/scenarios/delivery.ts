// Scenario 4, delivery across nodes: two TaskRuntimes on two PostgresTaskStores (two pools, two
// LISTEN connections), in one process so both ends read one clock. A task runs on node A; node B
// cancels it (or answers its elicitation); the sample is the time from just before B's call to the
// moment A notices: the tool's ctx.signal abort fires, or ctx.elicit returns.
// Once with LISTEN/NOTIFY, once polling only: runtimes without a node hear of nothing, so only
// the runtime's backstop poll (every pollIntervalMs) can notice.
import { randomUUID } from 'node:crypto';
import { TaskRuntime, type TaskContext, type TaskNode, type TaskOwner, type TaskRef, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { percentile } from '../stats.js';
import { sleep, waitUntil } from '../support/concurrency.js';
import { atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const POLL_INTERVAL_MS = 1_000;
const quiet = { warn: () => {}, error: () => {} };
const ELICIT = { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: {} } } as const;

/** The store with its deliveries switched off: only the runtime's poll notices anything. */
interface Nodes {
  readonly a: TaskRuntime;
  readonly b: TaskRuntime;
  readonly storeA: PostgresTaskStore;
  readonly storeB: PostgresTaskStore;
}

type Kind = 'cancel' | 'update';

/** Starts a task on A that waits (for its signal, or in elicit) and resolves when A noticed. */
async function startWaiting(nodes: Nodes, kind: Kind): Promise<{ ref: TaskRef; noticed: Promise<number> }> {
  const owner: TaskOwner = { subject: `user-${randomUUID()}`, server: 'bench', clientId: 'client', resource: '' };
  let noticed!: Promise<number>;
  let waiting!: () => void;
  const ready = new Promise<void>((resolve) => (waiting = resolve));
  const record = await nodes.a.start({
    owner,
    tool: kind === 'cancel' ? 'wait' : 'ask',
    args: {},
    execute: async (_args: object, ctx: TaskContext) => {
      if (kind === 'cancel') {
        noticed = new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
        waiting();
        await noticed;
      } else {
        let returned!: (at: number) => void;
        noticed = new Promise((resolve) => (returned = resolve));
        waiting();
        await ctx.elicit('go', ELICIT);
        returned(performance.now());
      }
      return { content: [] };
    },
  });
  await ready;
  const ref = { taskId: record.taskId, owner: record.owner };
  if (kind === 'update') await waitUntil(async () => (await nodes.storeB.get(ref))?.status === 'input_required', 10_000, 'input_required');
  return { ref, noticed };
}

async function send(nodes: Nodes, kind: Kind, ref: TaskRef): Promise<void> {
  if (kind === 'cancel') await nodes.b.cancel(ref);
  else await nodes.b.update(ref, { go: { action: 'accept', content: {} } });
}

/** One sample at a time: nothing else in flight, the latency of one delivery. */
async function sequentialSamples(nodes: Nodes, kind: Kind, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const { ref, noticed } = await startWaiting(nodes, kind);
    const sent = performance.now();
    await send(nodes, kind, ref);
    samples.push((await noticed) - sent);
  }
  return samples;
}

/**
 * Polling only: delivery waits for the next poll, so samples are taken side by side (all tasks
 * waiting at once, the sends spread over two poll intervals at random phases) instead of one poll
 * interval each.
 */
async function spreadSamples(nodes: Nodes, kind: Kind, count: number): Promise<number[]> {
  const waiting = [];
  for (let i = 0; i < count; i += 1) waiting.push(await startWaiting(nodes, kind));
  const spreadMs = 2 * POLL_INTERVAL_MS;
  return Promise.all(
    waiting.map(async ({ ref, noticed }, i) => {
      await sleep((i * spreadMs) / count);
      const sent = performance.now();
      await send(nodes, kind, ref);
      return (await noticed) - sent;
    }),
  );
}

export async function runDelivery(context: BenchContext): Promise<ScenarioResult> {
  const samples = context.quick ? 30 : 200;
  const storeA = await PostgresTaskStore.connect({ connectionString: context.databaseUrl, poolSize: 5, logger: quiet });
  const storeB = await PostgresTaskStore.connect({ connectionString: context.databaseUrl, poolSize: 5, migrate: false, logger: quiet });
  // Only the LISTEN connection: no lease, reaper or sweeper to disturb the figures.
  const listening = { lease: false, reaper: false, sweeper: false, logger: quiet } as const;
  const clusterA = await PostgresTaskNode.start(storeA, { ...listening, nodeId: 'node-a' });
  const clusterB = await PostgresTaskNode.start(storeB, { ...listening, nodeId: 'node-b' });
  const make = (store: TaskStore, node: TaskNode | undefined, nodeId: string) =>
    new TaskRuntime({ store, ...(node ? { node } : { nodeId }), pollIntervalMs: POLL_INTERVAL_MS, maxPerPrincipal: Infinity, onError: () => {} });
  const notify: Nodes = { a: make(storeA, clusterA, 'node-a'), b: make(storeB, clusterB, 'node-b'), storeA, storeB };
  // Without a node a runtime hears of nothing: the backstop poll alone.
  const polling: Nodes = { a: make(storeA, undefined, 'node-a-poll'), b: make(storeB, undefined, 'node-b-poll'), storeA, storeB };
  try {
    // The listener connects on the first watch; wait for it, and warm up.
    await sequentialSamples(notify, 'cancel', 5);
    await waitUntil(() => clusterA.listener!.state === 'listening', 10_000, 'listener');
    await sequentialSamples(notify, 'cancel', 20);
    await sequentialSamples(notify, 'update', 20);

    const series = new Map<string, { p50: number[]; p99: number[]; all: number[] }>();
    const record = (name: string, values: number[]) => {
      const entry = series.get(name) ?? { p50: [], p99: [], all: [] };
      entry.p50.push(percentile(values, 50));
      entry.p99.push(percentile(values, 99));
      entry.all.push(...values);
      series.set(name, entry);
      context.log(`  ${name}: p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms (${values.length} samples)`);
    };
    for (let run = 0; run < context.runs; run += 1) {
      record('cancel, NOTIFY', await sequentialSamples(notify, 'cancel', samples));
      record('update, NOTIFY', await sequentialSamples(notify, 'update', samples));
      record('cancel, polling only', await spreadSamples(polling, 'cancel', samples));
      record('update, polling only', await spreadSamples(polling, 'update', samples));
    }
    const of = (name: string) => series.get(name)!;
    const metrics: Metric[] = [
      { name: 'cancel B→A p50, NOTIFY', unit: 'ms', values: of('cancel, NOTIFY').p50, target: atMost(5), digits: 1 },
      { name: 'cancel B→A p99, NOTIFY', unit: 'ms', values: of('cancel, NOTIFY').p99, target: atMost(20), digits: 1 },
      { name: 'update B→A p50, NOTIFY', unit: 'ms', values: of('update, NOTIFY').p50, digits: 1 },
      { name: 'update B→A p99, NOTIFY', unit: 'ms', values: of('update, NOTIFY').p99, digits: 1 },
      { name: `cancel B→A p50, polling only (${POLL_INTERVAL_MS} ms)`, unit: 'ms', values: of('cancel, polling only').p50, digits: 0 },
      { name: `cancel B→A p99, polling only (${POLL_INTERVAL_MS} ms)`, unit: 'ms', values: of('cancel, polling only').p99, digits: 0 },
      { name: `update B→A p50, polling only (${POLL_INTERVAL_MS} ms)`, unit: 'ms', values: of('update, polling only').p50, digits: 0 },
      { name: `update B→A p99, polling only (${POLL_INTERVAL_MS} ms)`, unit: 'ms', values: of('update, polling only').p99, digits: 0 },
      {
        name: 'cancel p50: polling only / NOTIFY',
        unit: '×',
        values: of('cancel, polling only').p50.map((value, i) => value / of('cancel, NOTIFY').p50[i]!),
        digits: 0,
      },
    ];
    return {
      number: 4,
      title: 'Delivery across nodes: cancel and update',
      method:
        `Two \`TaskRuntime\`s on two \`PostgresTaskStore\`s (pools of 5, each its own LISTEN connection) in one process. ` +
        `A task runs on node A and waits (on \`ctx.signal\`, or in \`ctx.elicit\`); node B calls \`cancel\` (or \`update\` with the answer). ` +
        `A sample is the time from just before B's call until A notices (the abort event fires, or \`elicit\` returns); it includes B's ` +
        `write and commit. ${samples} samples per run and kind, one at a time. Polling only: runtimes on the same stores without a ` +
        `node (so without events), so only the runtime's backstop poll (\`pollIntervalMs\` ${POLL_INTERVAL_MS}) notices; those ${samples} ` +
        `tasks wait side by side and the sends are spread over two poll intervals.`,
      metrics,
      notes: [],
    };
  } finally {
    for (const runtime of [notify.a, notify.b, polling.a, polling.b]) await runtime.close();
    await clusterA.stop();
    await clusterB.stop();
    await storeA.close();
    await storeB.close();
  }
}
