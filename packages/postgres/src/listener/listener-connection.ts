import type pg from 'pg';

/** The application_name of the LISTEN connection, so operators can find it in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'mcp-tasks:listener';

/** The LISTEN connection's settings: the pool's, since it must reach the same server, directly. */
export function listenerConnectionConfig(pool: pg.Pool): pg.ClientConfig {
  const { max: _max, min: _min, idleTimeoutMillis: _idle, ...clientConfig } = pool.options as pg.PoolConfig;
  return { ...clientConfig, application_name: LISTENER_APPLICATION_NAME };
}
