// DBOS Transact beside the store (scenario 2): each client runs a durable no-op workflow and waits
// for its result, DBOS's create-then-complete (the workflow's status row written when it starts
// and again when it ends), on a system-database pool of the same size, on the same database
// (schema `dbos`); and a workflow of ten no-op steps (each step's outcome checkpointed), DBOS's
// journaled step beside the store's `ctx.step` (scenario 9). DBOS is a process-wide singleton:
// both subjects share one launch.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { closedLoop } from '../support/concurrency.js';
import { tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

export const DBOS_STEPS_PER_WORKFLOW = 10;

export interface DbosSubjects {
  /** A no-op workflow and its result: workflows per second. */
  readonly workflow: ThroughputSubject;
  /** A workflow of ten no-op steps: steps per second. */
  readonly steps: ThroughputSubject;
}

export async function openDbos(databaseUrl: string, shape: LoadShape): Promise<DbosSubjects> {
  DBOS.setConfig({ name: 'mcp-tasks-bench', systemDatabaseUrl: databaseUrl, systemDatabasePoolSize: shape.clients, logLevel: 'error' });
  const noop = DBOS.registerWorkflow(async () => 1, { name: 'noop' });
  const tenSteps = DBOS.registerWorkflow(
    async () => {
      for (let step = 0; step < DBOS_STEPS_PER_WORKFLOW; step += 1) await DBOS.runStep(async () => step, { name: `step-${step}` });
      return DBOS_STEPS_PER_WORKFLOW;
    },
    { name: 'ten-steps' },
  );
  await DBOS.launch();
  let open = 2;
  const close = async () => {
    open -= 1;
    if (open === 0) await DBOS.shutdown();
  };
  return {
    workflow: {
      label: 'DBOS Transact (a durable no-op workflow, its result awaited)',
      async run(_round, shape) {
        const elapsed = await closedLoop(shape.clients, shape.perClient, async () => {
          if ((await noop()) !== 1) throw new Error('the workflow returned something else');
        });
        return tasksPerSecond(shape, elapsed);
      },
      close,
    },
    steps: {
      label: `DBOS Transact (a workflow of ${DBOS_STEPS_PER_WORKFLOW} no-op steps)`,
      async run(_round, shape) {
        // A tenth of the runs, each ten steps: as many steps as the store's tasks, steps per second.
        const runs: LoadShape = { ...shape, perClient: Math.max(1, Math.round(shape.perClient / DBOS_STEPS_PER_WORKFLOW)) };
        const elapsed = await closedLoop(runs.clients, runs.perClient, async () => {
          if ((await tenSteps()) !== DBOS_STEPS_PER_WORKFLOW) throw new Error('the workflow returned something else');
        });
        return tasksPerSecond(runs, elapsed) * DBOS_STEPS_PER_WORKFLOW;
      },
      close,
    },
  };
}
