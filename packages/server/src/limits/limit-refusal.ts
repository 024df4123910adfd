import { InFlightLimitError, LimitReachedError, NodeSaturatedError, RateLimitedError, type JsonRpcError } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import type { DirectResponse } from '../exchange/direct-exchange.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/**
 * The answer to a request a limit refused: the JSON-RPC error, HTTP 429 for an owner's limit and
 * 503 for the node's saturation (its admission control, or a node-wide cap), and `Retry-After` in
 * whole seconds for a rate or a saturation (the error's `data.retryAfterMs` is exact). An
 * in-flight refusal says 1 s: the node cannot know when the owner's own requests will be answered.
 */
export function limitRefusal(id: RequestId | null, error: JsonRpcError): DirectResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error instanceof RateLimitedError || error instanceof NodeSaturatedError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  else if (error instanceof InFlightLimitError || isNodeCap(error)) headers['retry-after'] = '1';
  const status = error instanceof NodeSaturatedError || isNodeCap(error) ? 503 : 429;
  return { status, headers, body: JSON.stringify(jsonRpcErrorBody(id, error.toJSON())) };
}

/** A node-wide cap (`listenStreams.maxPerNode`, …): the node is full, not the owner. */
function isNodeCap(error: JsonRpcError): boolean {
  return error instanceof LimitReachedError && error.limit.endsWith('.maxPerNode');
}

/** Whether the limit named `limit` ({@link limitNameOf}) is the node's, not an owner's: `owner_limit` or `node_saturation`. */
export function refusalReasonOf(limit: string): 'owner_limit' | 'node_saturation' {
  return limit.startsWith('admission.') || limit.endsWith('.maxPerNode') ? 'node_saturation' : 'owner_limit';
}

/** The limit that refused: `rateLimit`, or the cap its error names (`data.limit`). */
export function limitNameOf(error: JsonRpcError): string {
  return error instanceof RateLimitedError || error instanceof InFlightLimitError || error instanceof LimitReachedError || error instanceof NodeSaturatedError ? error.limit : 'unknown';
}
