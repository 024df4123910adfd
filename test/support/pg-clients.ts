import pg from 'pg';

/**
 * The pools and clients a test opens itself. Each handles `error`: a connection the server ends
 * while it is idle (the file's database dropped at teardown, a restart or a terminate the test
 * causes) is then an error of the next query, never an uncaught exception that fails the file
 * after its tests passed. Every test opens its pools and clients here (`test/project/pg-clients-owned.test.ts`
 * checks that none does it by hand).
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', noteIdleError);
  return pool;
}

export function testClient(config: pg.ClientConfig | string): pg.Client {
  const client = new pg.Client(config);
  client.on('error', noteIdleError);
  return client;
}

/** The idle errors so far (a test that provokes one can see it arrived). */
export const idleErrors: Error[] = [];

function noteIdleError(error: Error): void {
  if (idleErrors.length < 100) idleErrors.push(error);
}

/**
 * Records, in the array it returns, the name of every named (prepared) statement sent through
 * `pool.query` from now on, without the hash suffix the store gives it: what a test reads to see
 * which of the store's hot statements went out, and in which order.
 */
export function recordStatementNames(pool: pg.Pool): string[] {
  const sent: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
    const name = (config as { name?: unknown } | null)?.name;
    if (typeof name === 'string') sent.push(name.replace(/_[0-9a-f]{16}$/, ''));
    return query(config, ...rest);
  };
  return sent;
}
