// The partition horizon (migrations 0030, 0032) as tests wait for it.
import type pg from 'pg';

/**
 * Until the horizon a round moved is ready (a second after the round, migration 0032): before, a
 * create goes by the horizon before it.
 */
export async function horizonReady(pool: pg.Pool): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await pool.query<{ ready: boolean }>('SELECT ready_at <= now() AS ready FROM mcp_tasks.task_partition_horizon')).rows[0]!.ready) {
    if (Date.now() > deadline) throw new Error('the partition horizon did not become ready within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
