import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * This node is saturated: its admission queue is full, or the request waited there longer than the
 * node's bound. It says nothing about the caller (no owner's limit refused it) and nothing was read
 * or written; any node may serve the same request, this one after `retryAfterMs`. Served as HTTP 503.
 */
export class NodeSaturatedError extends JsonRpcError {
  readonly limit: string;
  readonly retryAfterMs: number;

  constructor(limit: string, retryAfterMs: number) {
    const wait = Math.max(1, Math.ceil(retryAfterMs));
    super(ErrorCode.ServerError, `Server busy: this node cannot take the request now (${limit}); retry after ${wait} ms`, { limit, retryAfterMs: wait });
    this.limit = limit;
    this.retryAfterMs = wait;
  }
}
