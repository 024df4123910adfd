// Scenario 12, fair share (issue 26): on the default configuration a client that behaves is never
// refused. (a) Without authorization, 200 clients each poll their own task at its interval: none
// refused. (b) With tokens, one owner floods tasks/get with 64 loops while another polls its 100
// tasks at the interval: the polite owner is never refused and its p99 stays within 2 × of its p99
// without the flood. (c) Without authorization, the same flood beside 50 polite clients: the node
// stays up, no task fails, and whatever the node sheds (a 503 for saturation) is counted.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median, percentile } from '../stats.js';
import { runChildFlood } from '../support/child-flood.js';
import { sleep } from '../support/concurrency.js';
import { startDemoNode, stopDemoNode, type DemoNode } from '../support/demo-nodes.js';
import { rpc } from '../support/mcp-client.js';
import { alwaysEqualTo, atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const FLOOD_LOOPS = 64;
/** The flood process starts (tsx, its connections) before the polite clients poll beside it. */
const FLOOD_LEAD_MS = 3_000;
const POLL_INTERVAL_MS = 1_000;
const POLITE_TOKEN = 'polite';
const FLOOD_TOKEN = 'flooder';

interface PollCounts {
  readonly latencies: number[];
  refused: number;
  shed: number;
}

export async function runFairShare(context: BenchContext): Promise<ScenarioResult[]> {
  const pollMs = context.quick ? 3_000 : 10_000;
  const openClients = context.quick ? 50 : 200;
  const politeTasks = context.quick ? 20 : 100;
  const besideClients = context.quick ? 20 : 50;
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-bench-fair-'));
  const tokensPath = path.join(dir, 'tokens.json');
  await writeFile(tokensPath, JSON.stringify({ [POLITE_TOKEN]: { sub: 'polite', clientId: 'bench', scopes: [] }, [FLOOD_TOKEN]: { sub: 'flooder', clientId: 'bench', scopes: [] } }));
  // The default limits: empty values are the library's defaults (startDemoNode turns them off otherwise).
  const defaults = { MCP_TASKS_RATE_LIMIT: '', MCP_TASKS_MAX_IN_FLIGHT: '', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' };
  const nodes: DemoNode[] = [];
  try {
    const open = await startDemoNode(context.root, context.databaseUrl, 'bench-fair-open', defaults);
    nodes.push(open);
    const authed = await startDemoNode(context.root, context.databaseUrl, 'bench-fair-auth', { ...defaults, MCP_TASKS_TOKENS: tokensPath });
    nodes.push(authed);
    // The tasks run past every phase: a task that fails is the node's fault, not the clock's.
    const lastS = Math.ceil((context.runs * (3 * pollMs + 5_000)) / 1000) + 30;
    const openTasks = await createTasks(open.url, undefined, openClients, lastS);
    const politeIds = await createTasks(authed.url, POLITE_TOKEN, politeTasks, lastS);
    const [floodTarget] = await createTasks(authed.url, FLOOD_TOKEN, 1, lastS);
    const [openFloodTarget] = await createTasks(open.url, undefined, 1, lastS);
    const series = { aRefused: [] as number[], aP99: [] as number[], aP50: [] as number[], bRefused: [] as number[], bBaseP99: [] as number[], bFloodP99: [] as number[], bRatio: [] as number[], bFloodRefused: [] as number[], cRefused: [] as number[], cShed: [] as number[], cP99: [] as number[], cFailed: [] as number[], cFloodShed: [] as number[], cFloodAnswered: [] as number[] };
    for (let run = 0; run < context.runs; run += 1) {
      // (a) No authorization, every client polling its own task at the interval.
      const a = await pollAtInterval(open.url, undefined, openTasks, pollMs);
      series.aRefused.push(a.refused + a.shed);
      series.aP99.push(percentile(a.latencies, 99));
      series.aP50.push(percentile(a.latencies, 50));
      // (b) Two owners with tokens: the polite one alone, then beside the flood.
      const baseline = await pollAtInterval(authed.url, POLITE_TOKEN, politeIds, pollMs);
      const [flooded, floodCounts] = await beside(() => pollAtInterval(authed.url, POLITE_TOKEN, politeIds, pollMs), flood(context.root, authed.url, FLOOD_TOKEN, floodTarget!, pollMs + FLOOD_LEAD_MS));
      series.bRefused.push(baseline.refused + baseline.shed + flooded.refused + flooded.shed);
      series.bBaseP99.push(percentile(baseline.latencies, 99));
      series.bFloodP99.push(percentile(flooded.latencies, 99));
      series.bRatio.push(percentile(flooded.latencies, 99) / percentile(baseline.latencies, 99));
      series.bFloodRefused.push(floodCounts.ownerRefused);
      // (c) No authorization: the flood beside polite clients; only the node's saturation may shed them.
      const [c, openFlood] = await beside(() => pollAtInterval(open.url, undefined, openTasks.slice(0, besideClients), pollMs), flood(context.root, open.url, undefined, openFloodTarget!, pollMs + FLOOD_LEAD_MS));
      series.cRefused.push(c.refused);
      series.cShed.push(c.shed);
      series.cP99.push(percentile(c.latencies, 99));
      series.cFloodShed.push(openFlood.nodeShed);
      series.cFloodAnswered.push(openFlood.answered);
      series.cFailed.push(await failedOf(open.url, undefined, openTasks.slice(0, besideClients)));
      context.log(
        `  run ${run + 1}: (a) ${a.refused + a.shed} of ${a.latencies.length + a.refused + a.shed} refused, p99 ${percentile(a.latencies, 99).toFixed(1)} ms; ` +
          `(b) polite refused ${baseline.refused + flooded.refused}, p99 ${percentile(baseline.latencies, 99).toFixed(1)} → ${percentile(flooded.latencies, 99).toFixed(1)} ms, flooder refused ${floodCounts.ownerRefused} of ${floodCounts.answered + floodCounts.ownerRefused}; ` +
          `(c) polite refused ${c.refused}, shed ${c.shed}, flood answered ${openFlood.answered} shed ${openFlood.nodeShed}`,
      );
      await sleep(1_000);
    }
    const up = await rpc(open.url, 'tasks/get', { taskId: openTasks[0]! }).then((reply) => (reply.result ? 1 : 0)).catch(() => 0);
    const method =
      `Two demo nodes (their own processes) on one database with the default limits (rate limit, in-flight cap and queue, admission ` +
      `control, refusal hold) and no per-owner quota; one without authorization, one with a token table. Each polling client reads its ` +
      `task once per ${POLL_INTERVAL_MS / 1000} s, each at its own offset in the second, for ${pollMs / 1000} s; the flood (${FLOOD_LOOPS} closed ` +
      `loops of \`tasks/get\` of one task) runs in a process of its own. Every task is a \`slow_compute\` that runs past the scenario. A ` +
      `refusal is any JSON-RPC error: an owner's 429 or a node's 503. The load generator shares the machine with the nodes and PostgreSQL.`;
    const metrics = (prefix: string, list: Metric[]) => list.map((metric) => ({ ...metric, name: `${prefix} ${metric.name}` }));
    return [
      {
        number: 12,
        title: 'Fair share: no client that behaves is refused',
        method,
        metrics: [
          ...metrics(`(a) no auth, ${openClients} clients polling at the interval:`, [
            { name: 'polls refused (429 or 503)', unit: 'polls', values: series.aRefused, target: alwaysEqualTo(0), digits: 0 },
            { name: 'tasks/get p50', unit: 'ms', values: series.aP50, digits: 1 },
            { name: 'tasks/get p99', unit: 'ms', values: series.aP99, digits: 1 },
          ]),
          ...metrics(`(b) tokens, one owner polling ${politeTasks} tasks beside a ${FLOOD_LOOPS}-loop flood:`, [
            { name: "polite owner's polls refused", unit: 'polls', values: series.bRefused, target: alwaysEqualTo(0), digits: 0 },
            { name: "polite owner's p99 with the flood ÷ without", unit: '×', values: series.bRatio, target: atMost(2), digits: 2 },
            { name: "polite owner's p99 without the flood", unit: 'ms', values: series.bBaseP99, digits: 1 },
            { name: "polite owner's p99 with the flood", unit: 'ms', values: series.bFloodP99, digits: 1 },
            { name: "flooder's reads refused by its own limits", unit: 'reads', values: series.bFloodRefused, digits: 0 },
          ]),
          ...metrics(`(c) no auth, ${besideClients} clients polling beside a ${FLOOD_LOOPS}-loop flood:`, [
            { name: 'tasks that failed', unit: 'tasks', values: series.cFailed, target: alwaysEqualTo(0), digits: 0 },
            { name: 'polite polls refused by an owner limit (429)', unit: 'polls', values: series.cRefused, target: alwaysEqualTo(0), digits: 0 },
            { name: 'polite polls shed by node saturation (503, allowed)', unit: 'polls', values: series.cShed, digits: 0 },
            { name: 'polite tasks/get p99', unit: 'ms', values: series.cP99, digits: 1 },
            { name: 'flood reads answered', unit: 'reads', values: series.cFloodAnswered, digits: 0 },
            { name: 'flood reads shed (503)', unit: 'reads', values: series.cFloodShed, digits: 0 },
            { name: 'node still answering after the flood', unit: '', values: [up], target: alwaysEqualTo(1), digits: 0 },
          ]),
        ],
        notes: [
          `Without a subject every caller is the node's one host owner, so no per-owner rate or in-flight cap applies; the node's admission ` +
            `control (16 at once, 1 024 waiting, 2 s) decides who waits, and in (c) the flood and the polite clients share its FIFO. ` +
            `With tokens each owner has its own rate (following the tasks it polls: two reads per task per interval, at least 50/s) and its ` +
            `own 8 slots with a queue of 128, so the flood waits behind its own slots, not the polite owner's (median ratio ${median(series.bRatio).toFixed(2)} ×).`,
        ],
      },
    ];
  } finally {
    await Promise.all(nodes.map((node) => stopDemoNode(node)));
    await rm(dir, { recursive: true, force: true });
  }
}

/** `polls` started once `flooding` has had its lead, both awaited. */
async function beside<T, F>(polls: () => Promise<T>, flooding: Promise<F>): Promise<[T, F]> {
  await sleep(FLOOD_LEAD_MS);
  return Promise.all([polls(), flooding]);
}

/** Every task of `taskIds` read once per interval, each at its own offset within the interval, for `durationMs`. */
async function pollAtInterval(url: string, token: string | undefined, taskIds: readonly string[], durationMs: number): Promise<PollCounts> {
  const counts: PollCounts = { latencies: [], refused: 0, shed: 0 };
  const started = performance.now();
  await Promise.all(
    taskIds.map(async (taskId, i) => {
      let due = started + (i / taskIds.length) * POLL_INTERVAL_MS;
      while (due < started + durationMs) {
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const sent = performance.now();
        const reply = await rpc(url, 'tasks/get', { taskId }, token);
        if (!reply.error) counts.latencies.push(performance.now() - sent);
        else if (/^Server busy/.test(reply.error.message)) counts.shed += 1;
        else counts.refused += 1;
        // Polls no faster than the interval, and never two at once.
        due = Math.max(due + POLL_INTERVAL_MS, performance.now());
      }
    }),
  );
  return counts;
}

async function createTasks(url: string, token: string | undefined, count: number, seconds: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds, label: `fair-${i}` } }, token);
    const taskId = created.result?.['taskId'];
    if (typeof taskId !== 'string') throw new Error(`tools/call did not make a task: ${JSON.stringify(created)}`);
    ids.push(taskId);
  }
  return ids;
}

/** How many of `taskIds` are failed or gone (read one at a time, after the flood). */
async function failedOf(url: string, token: string | undefined, taskIds: readonly string[]): Promise<number> {
  let failed = 0;
  for (const taskId of taskIds) {
    const status = (await rpc(url, 'tasks/get', { taskId }, token)).result?.['status'];
    if (status !== 'working' && status !== 'completed') failed += 1;
  }
  return failed;
}

interface FloodCounts {
  readonly answered: number;
  readonly ownerRefused: number;
  readonly nodeShed: number;
  readonly errors: number;
}

/** The flood for `durationMs`, from a child process (bench/scenarios/read-flood-child.ts). */
function flood(root: string, url: string, token: string | undefined, taskId: string, durationMs: number): Promise<FloodCounts> {
  const env = { URL: url, TOKEN: token ?? '', TASK_ID: taskId, LOOPS: String(FLOOD_LOOPS), DURATION_MS: String(durationMs) };
  return runChildFlood<FloodCounts>(root, 'read-flood-child.ts', env, durationMs);
}
