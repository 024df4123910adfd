// Many tasks at once, for tests about what a statement reads beside them: copies of one task row
// made in one INSERT … SELECT (ids and ages differ, the rest is alike), far faster than creates.
import type pg from 'pg';

/** `copies` copies of task `taskId` in `schema` (ids `<id>-<n>`, each a millisecond younger). */
export async function insertCopiesOf(pool: pg.Pool, taskId: string, copies: number, schema = 'mcp_tasks'): Promise<void> {
  await pool.query(
    `INSERT INTO ${schema}.tasks
     SELECT (jsonb_populate_record(t, jsonb_build_object('id', t.id || '-' || g, 'created_at', t.created_at + g * interval '1 ms'))).*
       FROM ${schema}.tasks AS t, generate_series(1, $2::int) AS g
      WHERE t.id = $1`,
    [taskId, copies],
  );
}
