import type pg from 'pg';
import { sessionClientConfig, type SessionConnections } from '../node/session-connections.js';

/**
 * The application_name of the LISTEN connection, followed by `:` and the process's instance id,
 * so operators find it in pg_stat_activity and a namesake sees whether this process is still connected.
 */
export const LISTENER_APPLICATION_NAME = 'mcp-tasks:listener';

/** The LISTEN connection's settings: a session connection (direct when the node has a direct URL). */
export function listenerConnectionConfig(session: SessionConnections, instanceId: string): pg.ClientConfig {
  return sessionClientConfig(session, LISTENER_APPLICATION_NAME, instanceId);
}
