// How many statements a pool sent: the store sends each write alone through its pool (autocommit),
// so a count of `pool.query` calls is a count of its commits.
import type pg from 'pg';

/** Counts every `pool.query` from now on; read `sent` before and after a run. */
export function countStatements(pool: pg.Pool): { readonly sent: number } {
  let sent = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    sent += 1;
    return query(...args);
  };
  return {
    get sent() {
      return sent;
    },
  };
}
