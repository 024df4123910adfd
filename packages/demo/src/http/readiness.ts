import type { ServerResponse } from 'node:http';

/** Why a node cannot serve now, or undefined when it can. */
export type ReadinessCheck = () => Promise<string | undefined>;

/** What a readiness check needs of a PostgreSQL store (`PostgresTaskStore`). */
export interface PingableStore {
  ping(timeoutMs: number): Promise<void>;
}

/** What a readiness check needs of the node beside it (`PostgresTaskNode`): its LISTEN connection, if it has one. */
export interface ListeningNode {
  readonly listener?: { readonly state: string } | undefined;
}

/** Listener states a node serves in: not needed yet, listening, or relying on the poll (a pooler ate LISTEN). */
const SERVING_LISTENER_STATES = new Set(['idle', 'listening', 'polling-only']);

/** Ready when PostgreSQL answers within `timeoutMs` and the control listener is not (re)connecting or stopped. */
export function postgresReadiness(store: PingableStore, node: ListeningNode, timeoutMs = 2_000): ReadinessCheck {
  return async () => {
    const listener = node.listener?.state ?? 'idle';
    if (!SERVING_LISTENER_STATES.has(listener)) return `the control listener is ${listener}`;
    try {
      await store.ping(timeoutMs);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
}

/** `GET /readyz`: 200 `{"status":"ready"}`, or 503 `{"status":"not ready","reason":…}`. */
export async function serveReadiness(check: ReadinessCheck, res: ServerResponse): Promise<void> {
  const reason = await check();
  const [status, body] = reason === undefined ? [200, { status: 'ready' }] : [503, { status: 'not ready', reason }];
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
