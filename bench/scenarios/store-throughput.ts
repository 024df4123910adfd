// Scenario 2, the store: the same load through PostgresTaskStore.create (with the owner quota
// checked, or maxLive Infinity) and PostgresTaskStore.finish, on a pool of the same size.
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { closedLoop } from '../support/concurrency.js';
import { RESULT, tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

/**
 * `history: false` runs the same load on a schema of its own whose history triggers (migration
 * 0010) are disabled: the store as it was before the history, beside it in the same rounds, so
 * the difference is what the trigger costs.
 */
export async function openStoreLoad(databaseUrl: string, shape: LoadShape, maxLive: number, history = true): Promise<ThroughputSubject> {
  const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, poolSize: shape.clients, ...(history ? {} : { schema: 'bench_no_history' }) });
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  if (!history) await admin.query(`ALTER TABLE ${store.schema}.tasks DISABLE TRIGGER tasks_record_created, DISABLE TRIGGER tasks_record_changed`);
  // One owner per client: each client has at most one live task, so the quota (100) is checked
  // on every create but never refuses one.
  const owners: TaskOwner[] = Array.from({ length: shape.clients }, (_, i) => ({ subject: `owner-${i}`, server: 'bench', clientId: 'client', resource: '' }));
  return {
    label: `PostgresTaskStore (maxLive ${maxLive})${history ? '' : ', no history trigger'}`,
    async run(_round, shape) {
      await admin.query(`TRUNCATE ${store.schema}.tasks CASCADE`);
      const elapsed = await closedLoop(shape.clients, shape.perClient, async (client) => {
        const owner = owners[client]!;
        const task = await store.create(
          { taskId: newTaskId(), owner, tool: 'bench', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'node-1' },
          { maxLive },
        );
        const done = await store.finish({ taskId: task.taskId, owner }, { status: 'completed', result: RESULT });
        if (!done) throw new Error('finish lost its compare-and-set');
      });
      return tasksPerSecond(shape, elapsed);
    },
    async close() {
      await store.close();
      await admin.end();
    },
  };
}
