// Scenario 1, the ceiling: the same table (the project's migrations, in a schema of its own) and the
// same durability, written with plain SQL: INSERT a task row, then UPDATE it to completed. No
// quota, no validation, no row mapping: what the database allows for this pair of statements.
import { randomBytes } from 'node:crypto';
import { migrate } from '@mcp-tasks/postgres';
import pg from 'pg';
import { closedLoop } from '../support/concurrency.js';
import { RESULT, tasksPerSecond, type LoadShape, type ThroughputSubject } from './load-shape.js';

export const CEILING_SCHEMA = 'bench_ceiling';

const INSERT = `
  INSERT INTO ${CEILING_SCHEMA}.tasks (
    id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key,
    tool, scopes, status, status_message, created_at, last_updated_at,
    ttl_ms, expires_at, poll_interval_ms, node_id
  ) VALUES ($1, $2, 'bench', 'client', '', $3, 'bench', '{}', 'working', NULL, now(), now(),
            3600000, now() + interval '1 hour', 1000, 'node-1')`;

const COMPLETE = `
  UPDATE ${CEILING_SCHEMA}.tasks
     SET status = 'completed', result = $2::jsonb, last_updated_at = now()
   WHERE id = $1 AND status IN ('working', 'input_required')`;

export async function openCeiling(databaseUrl: string, shape: LoadShape): Promise<ThroughputSubject> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: shape.clients });
  await migrate(pool, CEILING_SCHEMA);
  const result = JSON.stringify(RESULT);
  return {
    label: 'plain SQL (ceiling)',
    async run(_round, shape) {
      await pool.query(`TRUNCATE ${CEILING_SCHEMA}.tasks CASCADE`);
      const elapsed = await closedLoop(shape.clients, shape.perClient, async (client) => {
        const id = randomBytes(18).toString('base64url');
        const subject = `owner-${client}`;
        await pool.query(INSERT, [id, subject, JSON.stringify([subject, 'bench', 'client', ''])]);
        await pool.query(COMPLETE, [id, result]);
      });
      return tasksPerSecond(shape, elapsed);
    },
    close: () => pool.end(),
  };
}
