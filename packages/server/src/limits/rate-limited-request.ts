import type { RequestId } from '@modelcontextprotocol/server';

/** A JSON-RPC request that the per-owner rate limit counts: `tasks/*` and `subscriptions/listen`. */
export interface RateLimitedRequest {
  readonly id: RequestId;
  readonly method: string;
}

/** The request in `body` when the rate limit counts it, otherwise undefined (other methods, notifications, responses). */
export function rateLimitedRequest(body: unknown): RateLimitedRequest | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { id, method } = body as { id?: unknown; method?: unknown };
  if (typeof method !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  return method.startsWith('tasks/') || method === 'subscriptions/listen' ? { id, method } : undefined;
}
