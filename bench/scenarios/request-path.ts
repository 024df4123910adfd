// Scenario 8, the request path beside its ceiling: one demo node, a README-style library host
// (bench/support/readme-host.mjs: defineTool, McpTasks.handler, createServer(handler.node)) and a
// bare server (bench/support/bare-tasks-get-server.mjs: node:http + pg, one SELECT by primary key
// with the owner and expiry filters) answer the same `tasks/get` load from the same client, taking
// turns within each round, so the ratio holds however the machine's speed drifts. Then one node end to
// end (tools/call, then tasks/get until completed) with the node's own CPU time per task.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { percentile } from '../stats.js';
import { closedLoopFor, openLoop, sleep } from '../support/concurrency.js';
import { spawnListening, startDemoNode, stopDemoNode, type DemoNode } from '../support/demo-nodes.js';
import { rpc } from '../support/mcp-client.js';
import { oneTask, saturate, seedCompletedTasks } from '../support/task-load.js';
import { atLeast, atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const CLIENTS = 16;
const SEEDED_TASKS = 200;

export async function runRequestPath(context: BenchContext): Promise<ScenarioResult> {
  const durationMs = context.quick ? 1_000 : 5_000;
  const node = await startDemoNode(context.root, context.databaseUrl, 'bench-request-path', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' });
  // Two more nodes for the cluster round: the three share the machine's CPUs with the one.
  const peers: DemoNode[] = [];
  let bare: DemoNode | undefined;
  let readme: DemoNode | undefined;
  let twoWrite: DemoNode | undefined;
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  try {
    const taskIds = await seedCompletedTasks(node.url, context.quick ? 20 : SEEDED_TASKS);
    const ownerKey = (await admin.query<{ owner_key: string }>('SELECT owner_key FROM mcp_tasks.tasks WHERE id = $1', [taskIds[0]])).rows[0]!.owner_key;
    bare = await startBareServer(context.root, context.databaseUrl, ownerKey);
    readme = await startReadmeHost(context.root, context.databaseUrl);
    twoWrite = await startTwoWriteServer(context.root, context.databaseUrl);
    // Its tasks are its own owner's (its server name is not the demo's): it reads tasks it made.
    const readmeTaskIds = await seedCompletedTasks(readme.url, context.quick ? 20 : SEEDED_TASKS);
    await closedLoopFor(CLIENTS, context.quick ? 300 : 1_500, async (worker) => void (await rpc(readme!.url, 'tasks/get', { taskId: readmeTaskIds[worker % readmeTaskIds.length]! })));
    const reads = (url: string) => async (worker: number) => void (await rpc(url, 'tasks/get', { taskId: taskIds[worker % taskIds.length]! }));
    // Warm-up: JIT, connections, the plan cache.
    for (const url of [node.url, bare.url]) await closedLoopFor(CLIENTS, context.quick ? 300 : 1_500, reads(url));

    const series = { nodeRate: [] as number[], bareRate: [] as number[], rateRatio: [] as number[], nodeP50: [] as number[], bareP50: [] as number[] };
    const library = { rate: [] as number[], ofNode: [] as number[], ofBare: [] as number[] };
    const halfLoad = { nodeP50: [] as number[], bareP50: [] as number[], ratio: [] as number[] };
    const endToEnd = { rate: [] as number[], ratio: [] as number[], cpuMs: [] as number[] };
    const cluster = { rate: [] as number[], ratio: [] as number[] };
    const ceiling = { rate: [] as number[], ofNode: [] as number[] };
    for (let i = 2; i <= 3; i += 1) peers.push(await startDemoNode(context.root, context.databaseUrl, `bench-request-path-${i}`, { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' }));
    const clusterUrls = [node.url, ...peers.map((peer) => peer.url)];
    for (const peer of peers) await closedLoopFor(CLIENTS, context.quick ? 300 : 1_500, reads(peer.url));
    for (let run = 0; run < context.runs; run += 1) {
      const nodeRound = await saturate(node.url, taskIds, durationMs);
      const bareRound = await saturate(bare.url, taskIds, durationMs);
      const readmeRound = await saturate(readme.url, readmeTaskIds, durationMs);
      library.rate.push(readmeRound.rate);
      library.ofNode.push(readmeRound.rate / nodeRound.rate);
      library.ofBare.push(readmeRound.rate / bareRound.rate);
      series.nodeRate.push(nodeRound.rate);
      series.bareRate.push(bareRound.rate);
      series.rateRatio.push(nodeRound.rate / bareRound.rate);
      series.nodeP50.push(nodeRound.p50);
      series.bareP50.push(bareRound.p50);

      // Both at half the node's own saturation rate (open loop), so latency is seen without queueing.
      const rate = Math.max(10, Math.round(nodeRound.rate / 2));
      const probe = (url: string) => openLoop(rate, durationMs, async (i) => void (await rpc(url, 'tasks/get', { taskId: taskIds[i % taskIds.length]! })));
      const nodeProbe = percentile(await probe(node.url), 50);
      const bareProbe = percentile(await probe(bare.url), 50);
      halfLoad.nodeP50.push(nodeProbe);
      halfLoad.bareP50.push(bareProbe);
      halfLoad.ratio.push(nodeProbe / bareProbe);

      await admin.query('DELETE FROM mcp_tasks.tasks WHERE NOT (id = ANY($1))', [taskIds]);
      const cpuBefore = await cpuSecondsOf(node.process.pid!);
      const completed = { count: 0 };
      const elapsed = await closedLoopFor(CLIENTS, durationMs, () => oneTask(node.url, completed));
      const cpuAfter = await cpuSecondsOf(node.process.pid!);
      const tasksPerS = completed.count / (elapsed / 1000);
      endToEnd.rate.push(tasksPerS);
      endToEnd.ratio.push(tasksPerS / bareRound.rate);
      endToEnd.cpuMs.push(((cpuAfter - cpuBefore) * 1000) / Math.max(1, completed.count));

      // The same load against the naive two-write server: the end-to-end ceiling of a task.
      await admin.query('DELETE FROM mcp_tasks.tasks WHERE NOT (id = ANY($1))', [taskIds]);
      const ceilingCompleted = { count: 0 };
      const ceilingElapsed = await closedLoopFor(CLIENTS, durationMs, () => oneTask(twoWrite!.url, ceilingCompleted));
      const ceilingRate = ceilingCompleted.count / (ceilingElapsed / 1000);
      ceiling.rate.push(ceilingRate);
      ceiling.ofNode.push(tasksPerS / ceilingRate);

      // The same load over three nodes, each task's calls taking turns among them (a round-robin front).
      await admin.query('DELETE FROM mcp_tasks.tasks WHERE NOT (id = ANY($1))', [taskIds]);
      const clusterCompleted = { count: 0 };
      let turn = 0;
      const clusterElapsed = await closedLoopFor(CLIENTS, durationMs, () => oneTask(() => clusterUrls[turn++ % clusterUrls.length]!, clusterCompleted));
      const clusterRate = clusterCompleted.count / (clusterElapsed / 1000);
      cluster.rate.push(clusterRate);
      cluster.ratio.push(clusterRate / tasksPerS);
      context.log(
        `  run ${run + 1}: tasks/get node ${nodeRound.rate.toFixed(0)}/s vs bare ${bareRound.rate.toFixed(0)}/s (${series.rateRatio.at(-1)!.toFixed(2)}×), ` +
          `README host ${readmeRound.rate.toFixed(0)}/s (${library.ofNode.at(-1)!.toFixed(2)}× node, ${library.ofBare.at(-1)!.toFixed(2)}× bare); ` +
          `p50 at ${rate}/s node ${nodeProbe.toFixed(1)} ms vs bare ${bareProbe.toFixed(1)} ms; end to end ${tasksPerS.toFixed(0)} tasks/s, ${endToEnd.cpuMs.at(-1)!.toFixed(2)} ms CPU/task; ` +
          `two-write server ${ceilingRate.toFixed(0)} tasks/s (node ${ceiling.ofNode.at(-1)!.toFixed(2)}×); ` +
          `three nodes ${clusterRate.toFixed(0)} tasks/s (${cluster.ratio.at(-1)!.toFixed(2)}× one)`,
      );
      await sleep(100);
    }
    const metrics: Metric[] = [
      { name: 'tasks/get: node ÷ bare server, round by round', unit: '×', values: series.rateRatio, target: atLeast(0.5), digits: 2 },
      { name: 'tasks/get throughput, node', unit: 'req/s', values: series.nodeRate, digits: 0 },
      { name: 'tasks/get throughput, bare server (ceiling)', unit: 'req/s', values: series.bareRate, digits: 0 },
      { name: 'tasks/get: README host (createServer(handler.node)) ÷ node, round by round', unit: '×', values: library.ofNode, target: atLeast(0.9), digits: 2 },
      { name: 'tasks/get: README host ÷ bare server, round by round', unit: '×', values: library.ofBare, target: atLeast(0.6), digits: 2 },
      { name: 'tasks/get throughput, README host', unit: 'req/s', values: library.rate, digits: 0 },
      { name: 'tasks/get p50 at saturation, node', unit: 'ms', values: series.nodeP50, digits: 1 },
      { name: 'tasks/get p50 at saturation, bare server', unit: 'ms', values: series.bareP50, digits: 1 },
      { name: 'tasks/get p50 at half the node\'s saturation: node ÷ bare', unit: '×', values: halfLoad.ratio, target: atMost(2), digits: 2 },
      { name: 'tasks/get p50 at half the node\'s saturation, node', unit: 'ms', values: halfLoad.nodeP50, digits: 1 },
      { name: 'tasks/get p50 at half the node\'s saturation, bare server', unit: 'ms', values: halfLoad.bareP50, digits: 1 },
      { name: 'tools/call → completed on one node ÷ bare tasks/get rate', unit: '×', values: endToEnd.ratio, target: atLeast(0.2), digits: 3 },
      { name: 'tools/call → completed on one node', unit: 'tasks/s', values: endToEnd.rate, digits: 0 },
      { name: 'node CPU per task, end to end', unit: 'ms', values: endToEnd.cpuMs, target: atMost(2.5), digits: 2 },
      { name: 'tools/call → completed: one node ÷ the naive two-write server, same round', unit: '×', values: ceiling.ofNode, digits: 2 },
      { name: 'tools/call → completed on the naive two-write server (ceiling)', unit: 'tasks/s', values: ceiling.rate, digits: 0 },
      { name: 'tools/call → completed on three nodes ÷ on one node, same round', unit: '×', values: cluster.ratio, target: atLeast(1), digits: 2 },
      { name: 'tools/call → completed on three nodes', unit: 'tasks/s', values: cluster.rate, digits: 0 },
    ];
    return {
      number: 8,
      title: 'The request path beside its ceiling: one node, a README-style host and a bare server',
      method:
        `One demo node (its own process, \`DATABASE_URL\`, the quota off) and a bare server (\`bench/support/bare-tasks-get-server.mjs\`: ` +
        `\`node:http\` and \`pg\`, read the body, \`JSON.parse\`, one prepared SELECT by primary key with the owner and expiry filters, ` +
        `\`JSON.stringify\`, write) on the same table and PostgreSQL, and a README-style library host (\`bench/support/readme-host.mjs\`: \`defineTool\`, ` +
        `\`McpTasks.handler\`, \`createServer(handler.node)\`, the per-owner limits and the quota off, reading tasks it made). ${CLIENTS} keep-alive clients of the same load generator ` +
        `(raw JSON-RPC over \`node:http\`) read ${context.quick ? 20 : SEEDED_TASKS} completed tasks with \`tasks/get\` for ${durationMs / 1000} s, ` +
        `first against the node, then against the bare server, then against the README host, in every round; ratios are taken within a round. Then both at half the ` +
        `node's saturation rate (open loop) for p50 without queueing. Then one node end to end: \`tools/call slow_compute {seconds: 0}\`, ` +
        `\`tasks/get\` until completed, ${CLIENTS} clients; the node's CPU time (utime + stime from /proc) over the tasks it completed. ` +
        `Then the same end-to-end load against a naive two-write server (\`bench/support/bare-two-write-server.mjs\`: \`node:http\` and \`pg\`, ` +
        `\`tools/call\` INSERTs a working row, answers, then UPDATEs it completed, two autocommits per task; \`tasks/get\` one SELECT), the ceiling of a whole task. ` +
        `Then the same load over three nodes (the one and two more, same machine), each call of a task going to the next node in turn, ` +
        `and its rate divided by the one node's of the same round.`,
      metrics,
      notes: [],
    };
  } finally {
    if (bare) await stopDemoNode(bare);
    if (readme) await stopDemoNode(readme);
    if (twoWrite) await stopDemoNode(twoWrite);
    await Promise.all([node, ...peers].map((n) => stopDemoNode(n)));
    await admin.end();
  }
}

function startBareServer(root: string, databaseUrl: string, ownerKey: string): Promise<DemoNode> {
  const env = { ...process.env, DATABASE_URL: databaseUrl, OWNER_KEY: ownerKey, PORT: '0' };
  return spawnListening(root, [path.join(root, 'bench/support/bare-tasks-get-server.mjs')], env, 'the bare server', 10_000);
}

function startTwoWriteServer(root: string, databaseUrl: string): Promise<DemoNode> {
  const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: '0' };
  return spawnListening(root, [path.join(root, 'bench/support/bare-two-write-server.mjs')], env, 'the two-write server', 10_000);
}

function startReadmeHost(root: string, databaseUrl: string): Promise<DemoNode> {
  const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', NODE_ID: 'bench-readme-host' };
  return spawnListening(root, [path.join(root, 'bench/support/readme-host.mjs')], env, 'the README host', 60_000);
}

/** User plus system CPU seconds a process has used (Linux /proc; fields 14 and 15 of stat, in clock ticks of 1/100 s, Linux's USER_HZ). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}
