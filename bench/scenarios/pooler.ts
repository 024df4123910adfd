// Scenario 13, through a transaction pooler: the store's reads and its create-then-finish load,
// directly and through PgBouncer in transaction mode (Debian's, started here, its defaults: no
// prepared statements kept, so the store's 'auto' turns them off at the first sign), on pools of
// the same size. The pooler costs a hop and the unprepared statements; what it buys (many clients
// on few backends) is not measured here.
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { pgBouncerMissing, startPgBouncer } from '../../test/support/pgbouncer.js';
import { closedLoop, closedLoopFor } from '../support/concurrency.js';
import { RESULT } from './load-shape.js';
import type { BenchContext, Metric, ScenarioResult } from '../types.js';

const CLIENTS = 16;
const quiet = { warn: () => undefined, error: () => undefined };

export async function runPooler(context: BenchContext): Promise<ScenarioResult> {
  const title = 'Through a transaction pooler (PgBouncer)';
  const missing = pgBouncerMissing();
  if (missing) return { number: 13, title, method: 'Not run.', metrics: [], notes: [`Skipped: ${missing}.`] };
  // The schema exists before either store connects: the pooled one does not migrate.
  await (await PostgresTaskStore.connect({ connectionString: context.databaseUrl, logger: quiet })).close();
  const bouncer = await startPgBouncer(context.databaseUrl, { poolSize: CLIENTS / 2 });
  const readMs = context.quick ? 500 : 3_000;
  const perClient = context.quick ? 10 : 100;
  const values: Record<string, number[]> = {};
  const record = (name: string, value: number) => (values[name] ??= []).push(value);
  try {
    for (const [label, url] of [
      ['direct', context.databaseUrl],
      ['PgBouncer', bouncer.url],
    ] as const) {
      const store = await PostgresTaskStore.connect({ connectionString: url, poolSize: CLIENTS, migrate: false, logger: quiet });
      try {
        const owners: TaskOwner[] = Array.from({ length: CLIENTS }, (_, i) => ({ subject: `pooler-${i}`, server: 'bench', clientId: '', resource: '' }));
        const refs = await Promise.all(
          owners.map(async (owner) => {
            const task = await store.create({ taskId: newTaskId(), owner, tool: 'bench', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'n' }, { maxLive: Infinity });
            return { taskId: task.taskId, owner };
          }),
        );
        for (let round = 0; round < context.runs; round += 1) {
          let reads = 0;
          const elapsed = await closedLoopFor(CLIENTS, readMs, async (client) => {
            if (!(await store.get(refs[client]!))) throw new Error('a read lost its task');
            reads += 1;
          });
          record(`${label}: tasks/get reads`, reads / (elapsed / 1000));
          const e2e = await closedLoop(CLIENTS, perClient, async (client) => {
            const owner = owners[client]!;
            const task = await store.create({ taskId: newTaskId(), owner, tool: 'bench', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'n' }, { maxLive: 100 });
            if (!(await store.finish({ taskId: task.taskId, owner }, { status: 'completed', result: RESULT }))) throw new Error('finish lost its compare-and-set');
          });
          record(`${label}: create + finish`, (CLIENTS * perClient) / (e2e / 1000));
        }
      } finally {
        await store.close();
      }
      context.log(`  ${label} done`);
    }
  } finally {
    await bouncer.stop();
  }
  const unit = (name: string) => (name.endsWith('reads') ? 'reads/s' : 'tasks/s');
  const metrics: Metric[] = Object.entries(values).map(([name, measured]) => ({ name, unit: unit(name), values: measured, digits: 0 }));
  return {
    number: 13,
    title,
    method:
      `${CLIENTS} clients in closed loops on one PostgresTaskStore with a pool of ${CLIENTS}, first directly, then through PgBouncer ` +
      `(pool_mode = transaction, ${CLIENTS / 2} server connections): \`get\` of a task for ${readMs / 1000} s, then ${perClient} create-then-finish per client (the owner quota checked). ` +
      'Through the pooler the store runs its statements unprepared (it switched them off at the first collision).',
    metrics,
    notes: [],
  };
}
