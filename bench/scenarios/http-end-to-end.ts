// Scenario 3, end to end over HTTP: three demo nodes (separate processes, one PostgreSQL), many
// clients round-robin over them. A client calls the task tool `slow_compute { seconds: 0 }` on one
// node and polls `tasks/get` on the next node until the task is completed, then starts again.
import pg from 'pg';
import { percentile } from '../stats.js';
import { closedLoopFor, openLoop, sleep } from '../support/concurrency.js';
import { startDemoNode, stopDemoNode, type DemoNode } from '../support/demo-nodes.js';
import { rpc } from '../support/mcp-client.js';
import { atLeast, atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const NODES = 3;
const CLIENTS = 32;
/** The rate of the open-loop `tasks/get` probe: a steady load well under saturation. */
const PROBE_RATE_PER_S = 100;

interface Variant {
  readonly label: string;
  readonly env: Record<string, string>;
  readonly judged: boolean;
}

/** The demo as configured by default (judged against the targets), and without the quota, to show what the quota costs. */
const VARIANTS: readonly Variant[] = [
  { label: 'default quota (100)', env: {}, judged: true },
  { label: 'MCP_TASKS_MAX_PER_PRINCIPAL=Infinity', env: { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' }, judged: false },
];

export async function runHttpEndToEnd(context: BenchContext): Promise<ScenarioResult> {
  const metrics: Metric[] = [];
  const notes: string[] = [];
  for (const variant of VARIANTS) {
    const measured = await measureVariant(context, variant, notes);
    const suffix = variant.judged ? '' : ` (${variant.label})`;
    metrics.push(
      { name: `tools/call → completed tasks/get${suffix}`, unit: 'tasks/s', values: measured.rates, ...(variant.judged ? { target: atLeast(400) } : {}), digits: 0 },
      { name: `tasks/get p50 under load${suffix}`, unit: 'ms', values: measured.p50s, ...(variant.judged ? { target: atMost(3) } : {}), digits: 1 },
      { name: `tasks/get p99 under load${suffix}`, unit: 'ms', values: measured.p99s, ...(variant.judged ? { target: atMost(15) } : {}), digits: 1 },
      { name: `tasks/get calls per task${suffix}`, unit: '', values: measured.getsPerTask, digits: 2 },
      { name: `tasks/get p50 at a steady ${PROBE_RATE_PER_S}/s${suffix}`, unit: 'ms', values: measured.probeP50s, digits: 1 },
      { name: `tasks/get p99 at a steady ${PROBE_RATE_PER_S}/s${suffix}`, unit: 'ms', values: measured.probeP99s, digits: 1 },
    );
  }
  return {
    number: 3,
    title: 'End to end over HTTP: three demo nodes',
    method:
      `${NODES} demo nodes, each its own process (\`node packages/demo/dist/node/main.js\`, ` +
      `\`DATABASE_URL\`, default pool of 10; without auth every caller shares the host scope, so all tasks have one owner), on one PostgreSQL. ` +
      `${CLIENTS} concurrent clients (raw JSON-RPC over \`node:http\`, keep-alive, the extension declared in \`_meta\`) round-robin over the nodes: ` +
      `\`tools/call slow_compute {seconds: 0}\` on one node, then \`tasks/get\` on the next node, back to back, until the task reads \`completed\`. ` +
      `A task counts when its completed \`tasks/get\` arrives. ${context.quick ? 2 : 10} s per run after a warm-up; the load generator runs on the same ` +
      `machine as the nodes and PostgreSQL. Measured with the default configuration (judged) and again with the quota off. ` +
      `After each run, \`tasks/get\` of completed tasks at a steady ${PROBE_RATE_PER_S} requests/s (open loop, round-robin) shows a read's latency without the queueing of the saturated loop (not judged).`,
    metrics,
    notes,
  };
}

async function measureVariant(context: BenchContext, variant: Variant, notes: string[]) {
  const durationMs = context.quick ? 2_000 : 10_000;
  const nodes: DemoNode[] = [];
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  try {
    for (let i = 0; i < NODES; i += 1) nodes.push(await startDemoNode(context.root, context.databaseUrl, `bench-node-${i + 1}`, variant.env));
    let turn = 0;
    const completedIds: string[] = [];
    const oneTask = async (getLatencies: number[], counts: { completed: number; inline: number; errors: number; gets: number }) => {
      const callNode = nodes[turn++ % NODES]!;
      const created = await rpc(callNode.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
      if (created.error || created.result?.['resultType'] !== 'task') {
        if (created.result?.['resultType'] === 'complete') counts.inline += 1;
        else counts.errors += 1;
        return;
      }
      const taskId = created.result['taskId'] as string;
      // Read from another node than the one that created it: any node answers for any task.
      const getNode = nodes[turn++ % NODES]!;
      for (;;) {
        const started = performance.now();
        const reply = await rpc(getNode.url, 'tasks/get', { taskId });
        getLatencies.push(performance.now() - started);
        counts.gets += 1;
        const status = reply.result?.['status'];
        if (status === 'completed') {
          counts.completed += 1;
          completedIds.push(taskId);
          return;
        }
        if (reply.error || status === 'failed' || status === 'cancelled') {
          counts.errors += 1;
          return;
        }
      }
    };

    // Warm-up (JIT in the nodes, connections), not recorded.
    await closedLoopFor(CLIENTS, context.quick ? 500 : 2_000, () => oneTask([], { completed: 0, inline: 0, errors: 0, gets: 0 }));

    const rates: number[] = [];
    const p50s: number[] = [];
    const p99s: number[] = [];
    const getsPerTask: number[] = [];
    const probeP50s: number[] = [];
    const probeP99s: number[] = [];
    for (let run = 0; run < context.runs; run += 1) {
      await admin.query('TRUNCATE mcp_tasks.tasks CASCADE');
      await sleep(200);
      const latencies: number[] = [];
      const counts = { completed: 0, inline: 0, errors: 0, gets: 0 };
      const elapsed = await closedLoopFor(CLIENTS, durationMs, () => oneTask(latencies, counts));
      rates.push(counts.completed / (elapsed / 1000));
      p50s.push(percentile(latencies, 50));
      p99s.push(percentile(latencies, 99));
      getsPerTask.push(counts.gets / Math.max(1, counts.completed));
      // The same reads at a steady 100/s (open loop: each request leaves on schedule, whether or
      // not earlier ones came back), so the latency of a read is seen apart from queueing at saturation.
      const probe = await openLoop(PROBE_RATE_PER_S, context.quick ? 1_000 : 3_000, async (i) => {
        await rpc(nodes[i % NODES]!.url, 'tasks/get', { taskId: completedIds[i % completedIds.length]! });
      });
      probeP50s.push(percentile(probe, 50));
      probeP99s.push(percentile(probe, 99));
      context.log(
        `  ${variant.label}, run ${run + 1}: ${rates.at(-1)!.toFixed(0)} tasks/s, tasks/get p50 ${p50s.at(-1)!.toFixed(1)} ms p99 ${p99s.at(-1)!.toFixed(1)} ms; ` +
          `at ${PROBE_RATE_PER_S}/s p50 ${probeP50s.at(-1)!.toFixed(1)} ms p99 ${probeP99s.at(-1)!.toFixed(1)} ms`,
      );
      if (counts.inline || counts.errors) notes.push(`${variant.label}, run ${run + 1}: ${counts.inline} calls ran inline (quota) and ${counts.errors} failed; neither is counted.`);
    }
    return { rates, p50s, p99s, getsPerTask, probeP50s, probeP99s };
  } finally {
    await Promise.all(nodes.map((node) => stopDemoNode(node)));
    await admin.end();
  }
}
