// Scenario 7, memory: resident memory of a node process holding many tasks that wait for input.
// Each run is a fresh child process (bench/scenarios/memory-child.ts, --expose-gc); the delta is
// taken after forced GCs, before the tasks start and once all of them are input_required.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { migrate } from '@mcp-tasks/postgres';
import pg from 'pg';
import { atMost, type BenchContext, type ScenarioResult } from '../types.js';

interface ChildReport {
  running: number;
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  startSeconds: number;
  pollMs: number;
  idleCpuPercent: number;
  idlePolls: number;
  idleWindowS: number;
  listenerProven: boolean;
}

const MB = 1024 * 1024;

function runChild(context: BenchContext, tasks: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    // The packages load from their build (dist/, as a node runs them), not through tsx: the
    // transpiler's keep-names wrappers give every closure a property store, a third of the heap here.
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join('bench', 'scenarios', 'memory-child.ts')], {
      cwd: context.root,
      env: { ...process.env, DATABASE_URL: context.databaseUrl, TASKS: String(tasks), IDLE_WINDOW_MS: String(context.quick ? 2_000 : 20_000) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
    child.once('exit', (code) => {
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !line) return reject(new Error(`memory child exited with ${code}: ${stderr}`));
      resolve(JSON.parse(line) as ChildReport);
    });
  });
}

export async function runMemory(context: BenchContext): Promise<ScenarioResult> {
  const tasks = context.quick ? 1_000 : 10_000;
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  const rss: number[] = [];
  const rssTotal: number[] = [];
  const heap: number[] = [];
  const perTask: number[] = [];
  const startRate: number[] = [];
  const poll: number[] = [];
  const idleCpu: number[] = [];
  const idlePolls: number[] = [];
  const notes: string[] = [];
  try {
    // The scenario may run alone (`--only 7`), before any other scenario made the schema.
    await migrate(admin, 'mcp_tasks');
    for (let run = 0; run < context.runs; run += 1) {
      await admin.query('TRUNCATE mcp_tasks.tasks CASCADE');
      const report = await runChild(context, tasks);
      if (report.running !== tasks) throw new Error(`${report.running} of ${tasks} tasks were running`);
      rss.push((report.rssAfter - report.rssBefore) / MB);
      rssTotal.push(report.rssAfter / MB);
      heap.push((report.heapAfter - report.heapBefore) / MB);
      perTask.push((report.heapAfter - report.heapBefore) / tasks / 1024);
      startRate.push(tasks / report.startSeconds);
      poll.push(report.pollMs);
      idleCpu.push(report.idleCpuPercent);
      idlePolls.push(report.idlePolls);
      if (!report.listenerProven) notes.push(`Run ${run + 1}: the listener was not proven at the end of the idle window (the poll ran at its base interval).`);
      context.log(
        `  run ${run + 1}: RSS +${rss.at(-1)!.toFixed(1)} MB (total ${rssTotal.at(-1)!.toFixed(0)} MB), heap +${heap.at(-1)!.toFixed(1)} MB, poll ${report.pollMs.toFixed(0)} ms; ` +
          `idle ${report.idleCpuPercent.toFixed(2)} % of a core over ${report.idleWindowS.toFixed(0)} s (${report.idlePolls} backstop polls)`,
      );
    }
  } finally {
    await admin.end();
  }
  return {
    number: 7,
    title: 'Memory: tasks waiting for input',
    method:
      `A child process (\`bench/scenarios/memory-child.ts\`, \`--expose-gc\`, the packages from their build) with a \`TaskRuntime\` (\`maxPerPrincipal: Infinity\`, 100 owners) on a ` +
      `\`PostgresTaskStore\` starts ${tasks.toLocaleString('en-US')} tasks, each blocked in \`ctx.elicit\`, and waits until all are \`input_required\` in the table. ` +
      `Memory is read after three forced GCs, before the tasks (after a warm-up of 50 tasks) and with all of them waiting; ` +
      `the harness's own list of the tasks shares the owners it started them with, so the delta is what the node holds. ` +
      `The backstop poll is one \`controlStates\` read of every waiting task, which the runtime repeats every \`pollIntervalMs\` (1 s) until the ` +
      `node's LISTEN connection has proved itself, then at a gap that doubles after each poll up to 32 intervals. The idle CPU is the child's ` +
      `\`process.cpuUsage()\` over a window (${context.quick ? 2 : 20} s) after all tasks wait, with nothing else happening.`,
    metrics: [
      { name: `RSS delta, ${tasks.toLocaleString('en-US')} waiting tasks`, unit: 'MB', values: rss, target: atMost(50), digits: 1 },
      { name: 'RSS of the process with them', unit: 'MB', values: rssTotal, digits: 0 },
      { name: 'heapUsed delta', unit: 'MB', values: heap, digits: 1 },
      { name: 'heapUsed per waiting task', unit: 'KiB', values: perTask, digits: 2 },
      { name: 'tasks started and waiting per second (16 starters)', unit: 'tasks/s', values: startRate, digits: 0 },
      { name: 'one backstop poll of all waiting tasks', unit: 'ms', values: poll, digits: 0 },
      { name: 'node CPU holding them while the listener is healthy (backstop poll and timers)', unit: '% of a core', values: idleCpu, target: atMost(2), digits: 2 },
      { name: 'backstop polls in that window', unit: '', values: idlePolls, digits: 0 },
    ],
    notes,
  };
}
