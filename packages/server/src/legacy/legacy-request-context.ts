import type { AuthInfo, RequestId, ServerContext } from '@modelcontextprotocol/server';
import { requestContextOf } from '../front/request-context.js';

/**
 * What the request tracer reads of a 2025-11-25 `tasks/*` request this edge serves without the
 * SDK: its id, method, `_meta` (the client's trace context) and the HTTP request (its
 * `MCP-Protocol-Version`), shaped as the SDK's context so both revisions' spans come out alike.
 */
export function legacyRequestContext(call: { id: RequestId; method: string; params: Record<string, unknown> }, request: Request, authInfo: AuthInfo | undefined): ServerContext {
  const meta = call.params['_meta'];
  return requestContextOf({ id: call.id, method: call.method, ...(typeof meta === 'object' && meta !== null ? { meta: meta as Record<string, unknown> } : {}) }, authInfo, request);
}
