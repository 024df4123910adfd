// What the database holds, as the checker needs it: samples of the live rows while the soak
// runs (the quota and the take-over of a dead node's tasks are judged on them), and every row,
// step and lease at the end.
import { testPool } from '../support/pg-clients.js';
import type { FinalRow, History, LiveRow } from './history.js';

export interface Observer {
  /** Stops sampling. */
  stop(): Promise<void>;
  /** Records every task row and step, and whether each holder's lease is live. */
  final(): Promise<void>;
}

export function startObserver(url: string, history: History, everyMs: number): Observer {
  // A PostgreSQL restart ends the observer's connection too: a missed sample, never a crash.
  const pool = testPool({ connectionString: url, max: 1, connectionTimeoutMillis: 3_000, idleTimeoutMillis: 1_000 });
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = Date.now();
      try {
        const { rows } = await pool.query<LiveRow>(
          `SELECT id, owner_key, status, node_id FROM mcp_tasks.tasks
            WHERE status IN ('working', 'input_required') AND (expires_at IS NULL OR expires_at > now())`,
        );
        history.add({ kind: 'sample', t, live: rows });
      } catch {
        // no sample this time
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
    async final() {
      const { rows } = await pool.query<FinalRow>(
        `SELECT t.id, t.owner_subject, t.owner_key, t.tool, t.status, t.result, t.error, t.node_id, t.attempt, t.handovers,
                t.max_attempts, t.resumable, (t.expires_at IS NOT NULL AND t.expires_at <= now()) AS expired,
                (extract(epoch FROM t.last_updated_at) * 1000)::float8 AS updated,
                EXISTS (SELECT 1 FROM mcp_tasks.nodes n WHERE n.node_id = t.node_id AND n.lease_expires_at > now()) AS lease_live
           FROM mcp_tasks.tasks t ORDER BY t.created_at, t.id`,
      );
      for (const row of rows) history.add({ kind: 'final-row', row });
      const steps = await pool.query<{ task_id: string; name: string; starts: number; done: boolean }>(
        `SELECT task_id, name, starts, done FROM mcp_tasks.task_steps ORDER BY task_id, seq`,
      );
      for (const step of steps.rows) history.add({ kind: 'final-step', ...step });
      await pool.end();
    },
  };
}
