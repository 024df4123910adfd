// pg-boss 10 beside the store (scenario 2): send, fetch, complete, from the same number of clients
// on a pool of the same size, on the same database. A fresh queue (its own partition) per run, as
// the store and the ceiling start each run from an empty table.
import PgBoss from 'pg-boss';
import { closedLoop } from '../support/concurrency.js';
import { RESULT, tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

export async function openPgBoss(databaseUrl: string, shape: LoadShape): Promise<ThroughputSubject> {
  const boss = new PgBoss({ connectionString: databaseUrl, max: shape.clients, supervise: false, schedule: false, migrate: true });
  boss.on('error', (error) => console.error('[bench] pg-boss:', error));
  await boss.start();
  return {
    label: 'pg-boss 10 (send, fetch, complete)',
    async run(round, shape) {
      const queue = `bench_${round}_${Date.now()}`;
      await boss.createQueue(queue);
      let empty = 0;
      const elapsed = await closedLoop(shape.clients, shape.perClient, async () => {
        await boss.send(queue, { n: 1 });
        for (;;) {
          const [job] = await boss.fetch(queue);
          if (job) {
            await boss.complete(queue, job.id, RESULT);
            return;
          }
          // Another client's fetch took the job this one sent; fetch again.
          empty += 1;
        }
      });
      if (empty > 0) console.error(`[bench] pg-boss: ${empty} empty fetches in run ${round}`);
      return tasksPerSecond(shape, elapsed);
    },
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}
