import { retryAfterMs } from './retry-after.js';
import { UpstreamError } from './upstream-error.js';

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` for an upstream client that does not read HTTP statuses itself (the 1.x SDK's
 * transport reports a 429 as a plain HTTP error): a POST the upstream refuses for its capacity
 * (429, 503) rejects with a busy {@link UpstreamError} carrying its `Retry-After`, so relays and
 * cancels of a 2025-11-25 upstream stand back as they do for a 2026-07-28 one.
 */
export function busyAwareFetch(name: string, inner: Fetch = fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    const status = response.status;
    if ((status !== 429 && status !== 503) || (init?.method ?? 'GET').toUpperCase() !== 'POST') return response;
    await response.body?.cancel().catch(() => undefined);
    const waitMs = retryAfterMs(response.headers.get('retry-after'));
    throw new UpstreamError(name, `${methodOf(init?.body)} was refused for the upstream's capacity (HTTP ${status}); it asks to wait ${waitMs} ms`, { retryAfterMs: waitMs });
  };
}

/** The JSON-RPC method a POSTed body carries, for the message. */
function methodOf(body: unknown): string {
  if (typeof body !== 'string') return 'a request';
  try {
    const method = (JSON.parse(body) as { method?: unknown }).method;
    return typeof method === 'string' ? method : 'a request';
  } catch {
    return 'a request';
  }
}
