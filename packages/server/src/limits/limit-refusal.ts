import { InFlightLimitError, LimitReachedError, RateLimitedError, type JsonRpcError } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { bodyBytesOf, type DirectRequest, type DirectResponse } from '../direct/direct-exchange.js';
import { heldRefusal, type RefusalHold } from './refusal-hold.js';

/**
 * The answer to a request a limit refused: the JSON-RPC error, HTTP 429, and for a rate limit
 * `Retry-After` in whole seconds (the error's `data.retryAfterMs` is exact). An in-flight refusal
 * says 1 s: the node cannot know when the owner's own requests will be answered.
 */
export function limitRefusal(id: RequestId | null, error: JsonRpcError): DirectResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error instanceof RateLimitedError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  else if (error instanceof InFlightLimitError) headers['retry-after'] = '1';
  return { status: 429, headers, body: JSON.stringify({ jsonrpc: '2.0', id, error: error.toJSON() }) };
}

/** {@link limitRefusal} for a direct `request` of `ownerKey`, once `hold` (if any) let it go. */
export function heldLimitRefusal(hold: RefusalHold | undefined, ownerKey: string, request: DirectRequest, id: RequestId | null, error: JsonRpcError): DirectResponse | Promise<DirectResponse> {
  return heldRefusal(hold, ownerKey, bodyBytesOf(request), limitNameOf(error), limitRefusal(id, error));
}

/** The limit that refused: `rateLimit`, or the cap its error names (`data.limit`). */
export function limitNameOf(error: JsonRpcError): string {
  if (error instanceof RateLimitedError) return 'rateLimit';
  return error instanceof InFlightLimitError || error instanceof LimitReachedError ? error.limit : 'unknown';
}
