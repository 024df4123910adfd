import type { ServerResponse } from 'node:http';

/**
 * Why a node cannot serve now, or undefined when it can; `listener`, when present, says how
 * cancels and answers reach this node's runs (`/readyz` shows it either way).
 */
export type ReadinessCheck = (() => Promise<string | undefined>) & { readonly listener?: () => ListenerReport | undefined };

/** The control listener's state as `/readyz` shows it. */
export interface ListenerReport {
  readonly listener: string;
  /** What an operator should know of that state (polling only: why, and what to set). */
  readonly detail?: string;
}

/** What `/readyz` says of a node whose LISTEN does not work: it serves, by the poll alone. */
export const POLLING_ONLY_DETAIL =
  'LISTEN does not work on this connection (a transaction-mode pooler?): cancels and answers reach running tasks by polling only; set DIRECT_DATABASE_URL to a direct connection';

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
  const check = async (): Promise<string | undefined> => {
    const listener = node.listener?.state ?? 'idle';
    if (!SERVING_LISTENER_STATES.has(listener)) return `the control listener is ${listener}`;
    try {
      await store.ping(timeoutMs);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  return Object.assign(check, { listener: () => listenerReport(node) });
}

function listenerReport(node: ListeningNode): ListenerReport | undefined {
  const state = node.listener?.state;
  if (state === undefined) return undefined;
  return state === 'polling-only' ? { listener: state, detail: POLLING_ONLY_DETAIL } : { listener: state };
}

/**
 * `GET /readyz`: 200 `{"status":"ready"}`, or 503 `{"status":"not ready","reason":…}`; with a
 * PostgreSQL store both name the control listener's state (`"listener":"listening"`, or
 * `"polling-only"` with a `detail`).
 */
export async function serveReadiness(check: ReadinessCheck, res: ServerResponse): Promise<void> {
  const reason = await check();
  const listener = check.listener?.() ?? {};
  const [status, body] = reason === undefined ? [200, { status: 'ready', ...listener }] : [503, { status: 'not ready', reason, ...listener }];
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
