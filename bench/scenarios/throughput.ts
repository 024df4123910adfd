// Scenarios 1 and 2 together: the ceiling, the store (quota on and off) and the peers run in
// turns within each round (ceiling, store, store ∞, …; then the next round), so a noisy
// neighbour or a checkpoint hits all of them alike, and every ratio is taken within one round.
// Then the ceiling and the store again at 32 clients, where per-row commits queue on the WAL
// flush and shared commits should pull ahead (issue 30's target); the 8-client subjects are
// closed first, so the 32-client pools fit a default max_connections of 100.
import { above, atLeast, type BenchContext, type Metric, type ScenarioResult } from '../types.js';
import { openCeiling } from './ceiling.js';
import type { LoadShape, ThroughputSubject } from './load-shape.js';
import { openDbos } from './dbos.js';
import { openGraphileWorker } from './graphile-worker.js';
import { openPgBoss } from './pg-boss.js';
import { openStoreLoad } from './store-throughput.js';

const WIDE_CLIENTS = 32;

/** Each subject warmed up, then `context.runs` rounds of every subject in turn: rates by subject. */
async function roundsOf(context: BenchContext, subjects: readonly ThroughputSubject[], shape: LoadShape): Promise<Map<ThroughputSubject, number[]>> {
  // A short warm-up of each (JIT, plan caches, connections), not recorded.
  const warmUp: LoadShape = { ...shape, perClient: Math.min(shape.perClient, 100) };
  for (const subject of subjects) await subject.run(-1, warmUp);
  const rates = new Map<ThroughputSubject, number[]>(subjects.map((subject) => [subject, []]));
  for (let round = 0; round < context.runs; round += 1) {
    for (const subject of subjects) {
      const rate = await subject.run(round, shape);
      rates.get(subject)!.push(rate);
      context.log(`  run ${round + 1}, ${shape.clients} clients: ${subject.label}: ${rate.toFixed(0)}/s`);
    }
  }
  return rates;
}

/** The ceiling and the store (maxLive 100) at {@link WIDE_CLIENTS} clients, in turns. */
async function wideRounds(context: BenchContext, perClient: number): Promise<{ ceiling: number[]; store: number[]; commitsPerTask: number[] }> {
  const shape: LoadShape = { clients: WIDE_CLIENTS, perClient };
  const subjects: ThroughputSubject[] = [];
  try {
    const ceiling = await openCeiling(context.databaseUrl, shape);
    subjects.push(ceiling);
    const store = await openStoreLoad(context.databaseUrl, shape, 100);
    subjects.push(store);
    const rates = await roundsOf(context, subjects, shape);
    return { ceiling: rates.get(ceiling)!, store: rates.get(store)!, commitsPerTask: store.commitsPerTask };
  } finally {
    for (const subject of subjects) await subject.close();
  }
}

export async function runThroughput(context: BenchContext): Promise<ScenarioResult[]> {
  const shape: LoadShape = { clients: 8, perClient: context.quick ? 50 : 1_000 };
  const subjects: ThroughputSubject[] = [];
  let closed = false;
  const closeAll = async () => {
    if (closed) return;
    closed = true;
    for (const subject of subjects) await subject.close();
  };
  try {
    const ceiling = await openCeiling(context.databaseUrl, shape);
    subjects.push(ceiling);
    const store = await openStoreLoad(context.databaseUrl, shape, 100);
    subjects.push(store);
    const unlimited = await openStoreLoad(context.databaseUrl, shape, Infinity);
    subjects.push(unlimited);
    const noHistory = await openStoreLoad(context.databaseUrl, shape, 100, false);
    subjects.push(noHistory);
    const boss = await openPgBoss(context.databaseUrl, shape);
    subjects.push(boss);
    const graphile = await openGraphileWorker(context.databaseUrl, shape);
    subjects.push(graphile);
    const { workflow: dbos, steps: dbosSteps } = await openDbos(context.databaseUrl, shape);
    subjects.push(dbos, dbosSteps);

    const rates = await roundsOf(context, subjects, shape);
    await closeAll();
    const wide = await wideRounds(context, context.quick ? 20 : 500);
    const of = (subject: ThroughputSubject) => rates.get(subject)!;
    const ratio = (a: number[], b: number[]) => a.map((value, i) => value / b[i]!);
    const method =
      `${shape.clients} concurrent clients on a pool of ${shape.clients} connections; each creates a task and completes it, ` +
      `${shape.perClient} times per run (${shape.clients * shape.perClient} tasks). Every subject starts each run from an empty table; ` +
      `the subjects take turns within each round and ratios are taken within a round.`;
    const ceilingResult: ScenarioResult = {
      number: 1,
      title: 'The ceiling: plain SQL on the same table',
      method:
        `${method} Plain SQL on the schema of the project's migrations (schema \`bench_ceiling\`): ` +
        `\`INSERT\` of a working task row, then \`UPDATE … SET status = 'completed', result = …\` (autocommit, same durability settings).`,
      metrics: [{ name: 'created + completed', unit: 'tasks/s', values: of(ceiling), digits: 0 }],
      notes: [],
    };
    const storeResult: ScenarioResult = {
      number: 2,
      title: 'Store throughput: PostgresTaskStore beside pg-boss',
      method:
        `${method} \`PostgresTaskStore.create\` (one owner per client, so the default quota of 100 is checked on every create ` +
        `but never refuses) then \`finish\`; the same with \`maxLive: Infinity\` (no advisory lock, no count); the same with maxLive 100 on a schema whose history triggers (migration 0010) are disabled, i.e. the store before the history; pg-boss 10 ` +
        `\`send\` + \`fetch\` + \`complete\` on a fresh queue per run, pool \`max: ${shape.clients}\`, supervision and scheduling off; graphile-worker 0.16 ` +
        `\`addJob\` of a no-op job, the client waiting until the same process's runner (${shape.clients} slots, pool \`max: ${shape.clients}\`) has written its completion (\`job:complete\`); DBOS Transact 5.3 running a durable no-op workflow and awaiting its result ` +
        `(system database pool \`${shape.clients}\`, schema \`dbos\`), and a workflow of ten no-op \`DBOS.runStep\`s (a tenth as many runs). ` +
        `Then the ceiling and the store alone again at ${WIDE_CLIENTS} clients on pools of ${WIDE_CLIENTS} (the subjects above closed first), ` +
        `${context.quick ? 20 : 500} tasks per client per run.`,
      metrics: [
        { name: 'store, maxLive 100', unit: 'tasks/s', values: of(store), digits: 0 },
        { name: 'store, maxLive ∞', unit: 'tasks/s', values: of(unlimited), digits: 0 },
        { name: 'pg-boss send/fetch/complete', unit: 'jobs/s', values: of(boss), digits: 0 },
        { name: 'graphile-worker addJob, no-op job completed', unit: 'jobs/s', values: of(graphile), digits: 0 },
        { name: 'store (maxLive 100) / graphile-worker', unit: '×', values: ratio(of(store), of(graphile)), target: atLeast(2), digits: 2 },
        { name: 'DBOS Transact, no-op workflow run and its result', unit: 'workflows/s', values: of(dbos), digits: 0 },
        { name: 'store (maxLive 100) / DBOS Transact', unit: '×', values: ratio(of(store), of(dbos)), digits: 2 },
        { name: 'DBOS Transact, a workflow of ten no-op steps (steps; the store\'s ctx.step: scenario 9)', unit: 'steps/s', values: of(dbosSteps), digits: 0 },
        { name: 'store (maxLive 100) / ceiling', unit: '×', values: ratio(of(store), of(ceiling)), target: atLeast(0.67), digits: 2 },
        { name: 'store (maxLive ∞) / ceiling', unit: '×', values: ratio(of(unlimited), of(ceiling)), digits: 2 },
        { name: 'store, maxLive 100, history trigger off', unit: 'tasks/s', values: of(noHistory), digits: 0 },
        { name: 'store with history / without (maxLive 100)', unit: '×', values: ratio(of(store), of(noHistory)), digits: 2 },
        { name: 'store (maxLive 100) / pg-boss', unit: '×', values: ratio(of(store), of(boss)), target: above(1), digits: 2 },
        { name: 'store (maxLive 100): commits per task (the ceiling makes 2; group commit shares them)', unit: 'commits', values: store.commitsPerTask, digits: 2 },
        { name: `ceiling, ${WIDE_CLIENTS} clients`, unit: 'tasks/s', values: wide.ceiling, digits: 0 },
        { name: `store (maxLive 100), ${WIDE_CLIENTS} clients`, unit: 'tasks/s', values: wide.store, digits: 0 },
        { name: `store (maxLive 100) / ceiling, ${WIDE_CLIENTS} clients`, unit: '×', values: ratio(wide.store, wide.ceiling), target: atLeast(1.5), digits: 2 },
        { name: `store (maxLive 100): commits per task, ${WIDE_CLIENTS} clients`, unit: 'commits', values: wide.commitsPerTask, digits: 2 },
      ] satisfies Metric[],
      notes: [],
    };
    return [ceilingResult, storeResult];
  } finally {
    await closeAll();
  }
}
