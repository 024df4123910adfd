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
