import { InFlightLimitError, RateLimitedError, type JsonRpcError } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';

/**
 * The HTTP answer of a request a limit refused: the JSON-RPC error, HTTP 429, and for a rate
 * limit `Retry-After` in whole seconds (the error's `data.retryAfterMs` is exact). An in-flight
 * refusal says 1 s: the node cannot know when the owner's own requests will be answered.
 */
export function limitResponse(id: RequestId | null, error: JsonRpcError): Response {
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitedError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  else if (error instanceof InFlightLimitError) headers['retry-after'] = '1';
  return Response.json({ jsonrpc: '2.0', id, error: error.toJSON() }, { status: 429, headers });
}
