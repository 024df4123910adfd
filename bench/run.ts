// The benchmark runner (started by scripts/bench.mjs, which picks the PostgreSQL server):
//   node --conditions=@mcp-tasks/source --import tsx bench/run.ts [--quick] [--out FILE] [--only 1,2,…]
// Creates a fresh database for the run, runs the scenarios in order, writes the markdown
// document (default docs/benchmarks.md), and drops the database.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderReport } from './report.js';
import { runCapacity } from './scenarios/capacity.js';
import { runHistory } from './scenarios/history.js';
import { runDelivery } from './scenarios/delivery.js';
import { runDurableWork } from './scenarios/durable-work.js';
import { runFairShare } from './scenarios/fair-share.js';
import { runHostileListens } from './scenarios/hostile-listens.js';
import { runHttpEndToEnd } from './scenarios/http-end-to-end.js';
import { runMemory } from './scenarios/memory.js';
import { runPooler } from './scenarios/pooler.js';
import { runQuota } from './scenarios/quota.js';
import { runRequestPath } from './scenarios/request-path.js';
import { runSweep } from './scenarios/sweep.js';
import { runThroughput } from './scenarios/throughput.js';
import { runWakeUps } from './scenarios/wake-ups.js';
import { createBenchDatabase } from './support/database.js';
import { describeEnvironment } from './support/environment.js';
import type { BenchContext, ScenarioResult } from './types.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, out: { type: 'string' }, only: { type: 'string' }, runs: { type: 'string' } },
});
const quick = args.quick ?? false;
const runs = args.runs ? Number(args.runs) : quick ? 1 : 3;
const out = path.resolve(args.out ?? path.join(root, 'docs/benchmarks.md'));
const only = args.only ? new Set(args.only.split(',').map(Number)) : undefined;
const serverUrl = process.env['BENCH_SERVER_URL'] ?? process.env['DATABASE_URL'];
if (!serverUrl) throw new Error('BENCH_SERVER_URL is not set; run the benchmarks through `npm run bench`');

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** The scenarios in document order; one entry may produce several sections. */
const SCENARIOS: ReadonlyArray<{ numbers: number[]; run: (context: BenchContext) => Promise<ScenarioResult[] | ScenarioResult> }> = [
  { numbers: [1, 2], run: runThroughput },
  { numbers: [3], run: runHttpEndToEnd },
  { numbers: [4], run: runDelivery },
  { numbers: [5], run: runSweep },
  { numbers: [6], run: runQuota },
  { numbers: [7], run: runMemory },
  { numbers: [8], run: runRequestPath },
  { numbers: [9], run: runDurableWork },
  { numbers: [10], run: runHostileListens },
  { numbers: [12], run: runFairShare },
  { numbers: [13], run: runPooler },
  { numbers: [21], run: runWakeUps },
  { numbers: [22], run: runCapacity },
  { numbers: [23], run: runHistory },
];

const started = performance.now();
const database = await createBenchDatabase(serverUrl);
log(`database ${database.name}; ${quick ? 'quick mode' : 'full mode'}, ${runs} run(s) per measurement`);
const results: ScenarioResult[] = [];
const failures = new Map<number, string>();
let exitCode = 0;
try {
  const environment = await describeEnvironment(database.url);
  const context: BenchContext = { databaseUrl: database.url, quick, runs, root, log };
  for (const scenario of SCENARIOS) {
    if (only && !scenario.numbers.some((n) => only.has(n))) continue;
    log(`scenario ${scenario.numbers.join(' and ')}`);
    const scenarioStarted = performance.now();
    try {
      const produced = await scenario.run(context);
      results.push(...(Array.isArray(produced) ? produced : [produced]));
    } catch (error) {
      exitCode = 1;
      log(`scenario ${scenario.numbers.join(' and ')} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      for (const n of scenario.numbers) failures.set(n, error instanceof Error ? error.message : String(error));
    }
    log(`  took ${((performance.now() - scenarioStarted) / 1000).toFixed(1)} s`);
  }
  const findings = quick ? undefined : await readFile(path.join(root, 'bench/findings.md'), 'utf8').catch(() => undefined);
  const markdown = renderReport({
    environment,
    quick,
    runs,
    durationS: (performance.now() - started) / 1000,
    scenarios: results,
    failures,
    ...(findings === undefined ? {} : { findings }),
  });
  await writeFile(out, markdown);
  log(`wrote ${out}`);
} finally {
  await database.drop().catch((error: unknown) => log(`dropping ${database.name} failed: ${String(error)}`));
}
process.exit(exitCode);
