import type pg from 'pg';
import { instanceApplicationName } from './node-identity.js';

/**
 * Where a node's connections that need a session of their own go: the LISTEN connection, the
 * lease connection (which also reads `pg_stat_activity` for namesakes), the maintenance leader's
 * and the migration's. Behind a transaction-mode pooler none of these works through the pooler
 * (LISTEN is lost between transactions, `application_name` follows whichever client the backend
 * serves), so they take a direct connection string when one is given; without it they use the
 * store's own settings, as the store's pool does.
 */
export interface SessionConnections {
  /** The client settings each session connection starts from. */
  readonly config: pg.ClientConfig;
  /** Whether they come from a direct connection string (a session of their own for certain). */
  readonly direct: boolean;
}

/** The session settings beside `pool`: its own (minus the pool's sizing), on `directConnectionString` when given. */
export function sessionConnections(pool: pg.Pool, directConnectionString: string | undefined): SessionConnections {
  const { max: _max, min: _min, idleTimeoutMillis: _idle, ...clientConfig } = pool.options as pg.PoolConfig;
  if (directConnectionString === undefined) return { config: clientConfig, direct: false };
  assertDirectConnectionString(directConnectionString);
  // Host, user, database and TLS come from the direct URL (pg lets a URL's fields win); the
  // pool's other settings (timeouts, an explicit ssl object) carry over.
  return { config: { ...clientConfig, connectionString: directConnectionString }, direct: true };
}

/** `config` for one session connection of this process, named `mcp-tasks:<role>:<instance id>` for pg_stat_activity. */
export function sessionClientConfig(session: SessionConnections, role: string, instanceId: string): pg.ClientConfig {
  return { ...session.config, application_name: instanceApplicationName(role, instanceId) };
}

export function assertDirectConnectionString(value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '') throw new TypeError('directConnectionString must be a non-empty connection string');
}
