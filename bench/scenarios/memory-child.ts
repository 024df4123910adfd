// The process scenario 7 measures (run with --expose-gc): a TaskRuntime on a PostgresTaskStore
// with TASKS tasks started, each blocked in ctx.elicit. Prints one JSON line with its measurements.
import { TaskRuntime, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';

const databaseUrl = process.env['DATABASE_URL']!;
const count = Number(process.env['TASKS']);
const nodeId = `memory-${process.pid}`;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const collect = async () => {
  for (let i = 0; i < 3; i += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage();
};

const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, migrate: false });
// A node as a demo node has one, less the lease (the bench's tasks outlive no node).
const node = await PostgresTaskNode.start(store, { nodeId, lease: false, reaper: false, sweeper: false });
const runtime = new TaskRuntime({ store, node, maxPerPrincipal: Infinity, onError: () => {} });
const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
const ELICIT = { mode: 'form', message: 'Continue?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } as const;
const execute = async (_args: object, ctx: { elicit: (key: string, params: typeof ELICIT) => Promise<unknown> }) => {
  await ctx.elicit('continue', ELICIT);
  return { content: [{ type: 'text', text: 'done' }] };
};
const owners: TaskOwner[] = Array.from({ length: 100 }, (_, i) => ({ subject: `memory-owner-${i}`, server: 'bench', clientId: 'client', resource: '' }));

// Warm up every code path (a few tasks that wait and are cancelled), so the baseline holds the loaded code.
const warm: TaskRef[] = [];
for (let i = 0; i < 50; i += 1) {
  const record = await runtime.start({ owner: owners[i % owners.length]!, tool: 'memory', args: {}, execute });
  warm.push({ taskId: record.taskId, owner: record.owner });
}
await waitForWaiting(50);
for (const ref of warm) await runtime.cancel(ref);
while (runtime.running > 0) await new Promise((resolve) => setTimeout(resolve, 10));
await admin.query('DELETE FROM mcp_tasks.tasks WHERE node_id = $1', [node.nodeId]);

const before = await collect();
const started = performance.now();
const refs: TaskRef[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < count) {
      next += 1;
      const owner = owners[next % owners.length]!;
      const record = await runtime.start({ owner, tool: 'memory', args: {}, execute });
      // The harness's own list (for the poll below) shares the owners: the delta is the runtime's.
      refs.push({ taskId: record.taskId, owner });
    }
  }),
);
await waitForWaiting(count);
const startSeconds = (performance.now() - started) / 1000;
const after = await collect();
// What the runtime's backstop poll costs with this many runs: one controlStates read of them all.
const polls: number[] = [];
for (let i = 0; i < 3; i += 1) {
  const pollStarted = performance.now();
  await store.controlStates(refs);
  polls.push(performance.now() - pollStarted);
}
// The idle cost of holding them: the process's CPU over a window in which nothing happens but the
// runtime's backstop poll (slowed while the listener is proven) and the node's own timers.
const idleWindowMs = Number(process.env['IDLE_WINDOW_MS'] ?? 20_000);
const pollsBefore = runtime.backstop.polls;
const cpuBefore = process.cpuUsage();
const idleStarted = performance.now();
await new Promise((resolve) => setTimeout(resolve, idleWindowMs));
const cpu = process.cpuUsage(cpuBefore);
const idleMs = performance.now() - idleStarted;
process.stdout.write(
  JSON.stringify({
    idleCpuPercent: ((cpu.user + cpu.system) / 1000 / idleMs) * 100,
    idlePolls: runtime.backstop.polls - pollsBefore,
    idleWindowS: idleMs / 1000,
    listenerProven: node.signalsProven(),
    running: runtime.running,
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    startSeconds,
    pollMs: Math.min(...polls),
  }) + '\n',
);
await runtime.close();
await node.stop();
await store.close();
await admin.end();
process.exit(0);

async function waitForWaiting(expected: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM mcp_tasks.tasks WHERE node_id = $1 AND status = 'input_required'`, [node.nodeId]);
    if (rows[0]!.n >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${rows[0]!.n} of ${expected} tasks are waiting`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
