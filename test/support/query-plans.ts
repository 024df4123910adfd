// A statement's plan as PostgreSQL ran it (EXPLAIN ANALYZE, in a transaction rolled back, so a
// write explained changes nothing): what a test reads to say how many rows a statement touched.
import type pg from 'pg';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** A statement the store sent: its text and parameters, as kysely hands them to `client.query`. */
export interface SentStatement {
  readonly text: string;
  readonly values: unknown[];
}

/**
 * Keeps, in `into`, every statement of a client of `pool` whose text `matches` (kysely calls
 * `client.query(text, values)`); from the next connection on.
 */
export function recordStatements(pool: pg.Pool, matches: (text: string) => boolean, into: SentStatement[]): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && matches(args[0])) into.push({ text: args[0], values: (args[1] as unknown[]) ?? [] });
      return query(...args);
    };
  });
}

/** `statement` run under EXPLAIN (ANALYZE, FORMAT JSON) on one of `pool`'s connections, rolled back. */
export async function explainAnalyzed(pool: pg.Pool, statement: SentStatement): Promise<PlanNode> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const explained = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.values);
    return (explained.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

export function* nodesOf(plan: PlanNode): Generator<PlanNode> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodesOf(child);
}
