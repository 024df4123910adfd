// DBOS Transact beside the store (scenario 2): each client runs a durable no-op workflow and waits
// for its result, DBOS's create-then-complete (the workflow's status row written when it starts
// and again when it ends), on a system-database pool of the same size, on the same database
// (schema `dbos`). DBOS is a process-wide singleton: one subject per process.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { closedLoop } from '../support/concurrency.js';
import { tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

export async function openDbos(databaseUrl: string, shape: LoadShape): Promise<ThroughputSubject> {
  DBOS.setConfig({ name: 'mcp-tasks-bench', systemDatabaseUrl: databaseUrl, systemDatabasePoolSize: shape.clients, logLevel: 'error' });
  const noop = DBOS.registerWorkflow(async () => 1, { name: 'noop' });
  await DBOS.launch();
  return {
    label: 'DBOS Transact (a durable no-op workflow, its result awaited)',
    async run(_round, shape) {
      const elapsed = await closedLoop(shape.clients, shape.perClient, async () => {
        if ((await noop()) !== 1) throw new Error('the workflow returned something else');
      });
      return tasksPerSecond(shape, elapsed);
    },
    close: () => DBOS.shutdown(),
  };
}
