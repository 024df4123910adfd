// Scenario 2, the store: the same load through PostgresTaskStore.create (with the owner quota
// checked, or maxLive Infinity) and PostgresTaskStore.finish, on a pool of the same size.
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { closedLoop } from '../support/concurrency.js';
import { countStatements } from '../support/statement-count.js';
import { RESULT, tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

/**
 * `history: false` runs the same load on a schema of its own whose history triggers (migration
 * 0010) are disabled: the store as it was before the history, beside it in the same rounds, so
 * the difference is what the trigger costs.
 */
export async function openStoreLoad(databaseUrl: string, shape: LoadShape, maxLive: number, history = true): Promise<ThroughputSubject & { readonly commitsPerTask: number[] }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: shape.clients });
  pool.on('error', () => undefined);
  // Every statement of this load is a write the store sends alone through the pool (autocommit):
  // counting them counts the commits, which group commit makes fewer than two per task.
  const statements = countStatements(pool);
  const store = await PostgresTaskStore.connect({ pool, ...(history ? {} : { schema: 'bench_no_history' }) });
  const commitsPerTask: number[] = [];
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  if (!history) await admin.query(`ALTER TABLE ${store.schema}.tasks DISABLE TRIGGER tasks_record_created, DISABLE TRIGGER tasks_record_changed`);
  // One owner per client: each client has at most one live task, so the quota (100) is checked
  // on every create but never refuses one.
  const owners: TaskOwner[] = Array.from({ length: shape.clients }, (_, i) => ({ subject: `owner-${i}`, server: 'bench', clientId: 'client', resource: '' }));
  return {
    label: `PostgresTaskStore (maxLive ${maxLive})${history ? '' : ', no history trigger'}`,
    commitsPerTask,
    async run(round, shape) {
      await admin.query(`TRUNCATE ${store.schema}.tasks CASCADE`);
      const before = statements.sent;
      const elapsed = await closedLoop(shape.clients, shape.perClient, async (client) => {
        const owner = owners[client]!;
        const task = await store.create(
          { taskId: newTaskId(), owner, tool: 'bench', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'node-1' },
          { maxLive },
        );
        const done = await store.finish({ taskId: task.taskId, owner }, { status: 'completed', result: RESULT });
        if (!done) throw new Error('finish lost its compare-and-set');
      });
      if (round >= 0) commitsPerTask.push((statements.sent - before) / (shape.clients * shape.perClient));
      return tasksPerSecond(shape, elapsed);
    },
    async close() {
      await store.close();
      await pool.end();
      await admin.end();
    },
  };
}
