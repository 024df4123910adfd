import pg from 'pg';
import { requireDatabaseUrl, type DatabaseOptions } from './database-options.js';
import { explainConnectionError } from './connection-error.js';

/**
 * Runs `work` with a one-connection pool, opened and checked first so a bad URL, TLS mismatch or
 * silent host is reported as such before any statement, and closed afterwards.
 */
export async function withPool<T>(options: DatabaseOptions, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const url = requireDatabaseUrl(options);
  const pool = new pg.Pool({ connectionString: options.url, max: 1, connectionTimeoutMillis: options.connectTimeoutMs });
  // An idle connection the server drops must not crash the command; the next query reports it.
  pool.on('error', () => {});
  try {
    try {
      const client = await pool.connect();
      client.release();
    } catch (error) {
      throw explainConnectionError(error, url, options.connectTimeoutMs);
    }
    return await work(pool);
  } finally {
    await pool.end();
  }
}
