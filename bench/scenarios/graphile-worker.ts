// graphile-worker beside the store (scenario 2): each client adds a job (`addJob`) and waits until
// a worker of the same process has run it (a no-op) and written its completion back, the same
// create-then-complete as the store's; a runner with one slot per client on a pool of the same
// size, on the same database (schema `graphile_worker`). graphile-worker 0.16 (0.17 added
// `addJobs`; 0.18 needs Node 22, and the bench runs on Node 20).
import { Logger, run, type Runner } from 'graphile-worker';
import { closedLoop } from '../support/concurrency.js';
import { tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

export async function openGraphileWorker(databaseUrl: string, shape: LoadShape): Promise<ThroughputSubject> {
  const waiting = new Map<string, () => void>();
  // A job the worker completed before its addJob answered: its client does not wait for it.
  const early = new Set<string>();
  const runner: Runner = await run({
    connectionString: databaseUrl,
    concurrency: shape.clients,
    maxPoolSize: shape.clients,
    noHandleSignals: true,
    pollInterval: 1_000,
    logger: quietLogger(),
    taskList: { noop: async () => undefined },
  });
  runner.events.on('job:complete', ({ job }) => {
    const done = waiting.get(job.id);
    if (!done) {
      early.add(job.id);
      return;
    }
    waiting.delete(job.id);
    done();
  });
  return {
    label: 'graphile-worker 0.16 (addJob, a worker completing no-op jobs)',
    async run(_round, shape) {
      const elapsed = await closedLoop(shape.clients, shape.perClient, async () => {
        const job = await runner.addJob('noop', { n: 1 });
        if (early.delete(job.id)) return;
        await new Promise<void>((resolve) => {
          waiting.set(job.id, resolve);
        });
      });
      return tasksPerSecond(shape, elapsed);
    },
    close: () => runner.stop(),
  };
}

function quietLogger() {
  // The library's logger factory, with nothing below a warning printed (a job per line otherwise).
  return new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') console.error(`[bench] graphile-worker: ${message}`);
  });
}
