import type pg from 'pg';
import { instanceApplicationName } from '../node/node-identity.js';

/**
 * The application_name of the LISTEN connection, followed by `:` and the process's instance id,
 * so operators find it in pg_stat_activity and a namesake sees whether this process is still connected.
 */
export const LISTENER_APPLICATION_NAME = 'mcp-tasks:listener';

/** The LISTEN connection's settings: the pool's, since it must reach the same server, directly. */
export function listenerConnectionConfig(pool: pg.Pool, instanceId: string): pg.ClientConfig {
  const { max: _max, min: _min, idleTimeoutMillis: _idle, ...clientConfig } = pool.options as pg.PoolConfig;
  return { ...clientConfig, application_name: instanceApplicationName(LISTENER_APPLICATION_NAME, instanceId) };
}
