import { createHash } from 'node:crypto';
import type { RawBuilder } from 'kysely';
import type { SqlContext } from './sql-context.js';

const names = new Map<string, string>();

/**
 * The rows of `query`, run as a named (prepared) statement on the store's pool when the context
 * has it, so PostgreSQL parses and plans a hot statement once per connection instead of on every
 * call; in a transaction (no pool on the context) it runs there as usual. The name carries a hash
 * of the text: two schemas (two texts) never share a name on one connection. Behind a pooler that
 * cannot keep them the store's {@link PreparedStatements} switch turns them off.
 */
export async function preparedRows<R>(context: SqlContext, operation: string, query: RawBuilder<R>): Promise<R[]> {
  if (!context.pool || !context.prepared?.enabled) return (await query.execute(context.db)).rows;
  const compiled = query.compile(context.db);
  let name = names.get(compiled.sql);
  if (name === undefined) {
    name = `mcp_tasks_${operation}_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 16)}`;
    names.set(compiled.sql, name);
  }
  try {
    const { rows } = await context.pool.query<R & object>({ name, text: compiled.sql, values: [...compiled.parameters] });
    return rows;
  } catch (error) {
    // A migration that changed the table under a connection's prepared `SELECT *` ("cached plan
    // must not change result type"): the statement runs unprepared on that connection instead.
    if ((error as { code?: unknown } | null)?.code !== STALE_PLAN && !context.prepared?.pooledAway(error)) throw error;
    return (await query.execute(context.db)).rows;
  }
}

/** SQLSTATE feature_not_supported, which a prepared statement whose result type changed fails with. */
const STALE_PLAN = '0A000';
