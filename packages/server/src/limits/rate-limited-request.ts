import type { RequestId } from '@modelcontextprotocol/server';

/**
 * A JSON-RPC message the limits count: a request of `tasks/*` or `subscriptions/listen` (kind
 * `task`), an answer a 2025-11-25 client POSTs to an input request (kind `task` too: it writes a
 * task row), or a `tools/call` (kind `toolCall`: counted when it names a task tool).
 */
export interface RateLimitedRequest {
  /** The request's id; `null` for a POSTed answer (a refusal of it answers no request of the client's). */
  readonly id: RequestId | null;
  readonly method: string;
  readonly kind: 'task' | 'toolCall';
  /** `params.taskId` when it is a string: an owner's rate follows the tasks it polls. */
  readonly taskId?: string;
  /** `params.name` of a `tools/call`. */
  readonly toolName?: string;
}

/** The message in `body` when the limits count it, otherwise undefined (other methods, notifications, batches). */
export function rateLimitedRequest(body: unknown): RateLimitedRequest | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  if (method === undefined) return 'result' in body || 'error' in body ? { id: null, method: 'response', kind: 'task' } : undefined;
  if (typeof method !== 'string') return undefined;
  const named = typeof params === 'object' && params !== null ? (params as { taskId?: unknown; name?: unknown }) : {};
  if (method === 'tools/call') return typeof named.name === 'string' ? { id, method, kind: 'toolCall', toolName: named.name } : undefined;
  if (!method.startsWith('tasks/') && method !== 'subscriptions/listen') return undefined;
  return typeof named.taskId === 'string' ? { id, method, kind: 'task', taskId: named.taskId } : { id, method, kind: 'task' };
}
