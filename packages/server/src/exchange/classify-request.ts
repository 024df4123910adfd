import type { RequestId } from '@modelcontextprotocol/server';

/**
 * One JSON-RPC message as the pipeline sees it, read once from the parsed body: a request of
 * `tasks/*` or `subscriptions/listen` (kind `task`), an answer a 2025-11-25 client POSTs to an
 * input request (kind `task` too: it writes a task row), or a `tools/call` (kind `toolCall`:
 * counted by the limits when it names a task tool).
 */
export interface ClassifiedRequest {
  /** The request's id; `null` for a POSTed answer (a refusal of it answers no request of the client's). */
  readonly id: RequestId | null;
  readonly method: string;
  readonly kind: 'task' | 'toolCall';
  /** `params.taskId` when it is a string: an owner's rate follows the tasks it polls. */
  readonly taskId?: string;
  /** `params.name` of a `tools/call`. */
  readonly toolName?: string;
  /** `params` when an object, else empty. */
  readonly params: Readonly<Record<string, unknown>>;
}

const NO_PARAMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** What each parsed body was classified as: the fast lane and the SDK lane see the same body object, so it is read once. */
const classified = new WeakMap<object, ClassifiedRequest | null>();

/**
 * The message in `body` when the pipeline's steps act on it (the fast lane's method table, the
 * limits, the listen edge), otherwise undefined (other methods, notifications, batches). The
 * verdict is kept with the body: the lane a request ends in does not classify it again.
 */
export function classifyRequest(body: unknown): ClassifiedRequest | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const known = classified.get(body);
  if (known !== undefined) return known ?? undefined;
  const verdict = classify(body);
  classified.set(body, verdict ?? null);
  return verdict;
}

function classify(body: object): ClassifiedRequest | undefined {
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  if (method === undefined) return 'result' in body || 'error' in body ? { id: null, method: 'response', kind: 'task', params: NO_PARAMS } : undefined;
  if (typeof method !== 'string') return undefined;
  const plain = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : NO_PARAMS;
  const named = typeof params === 'object' && params !== null ? (params as { taskId?: unknown; name?: unknown }) : {};
  if (method === 'tools/call') return typeof named.name === 'string' ? { id, method, kind: 'toolCall', toolName: named.name, params: plain } : undefined;
  if (!method.startsWith('tasks/') && method !== 'subscriptions/listen') return undefined;
  return typeof named.taskId === 'string' ? { id, method, kind: 'task', taskId: named.taskId, params: plain } : { id, method, kind: 'task', params: plain };
}
