import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The caller sent more task operations than its share allows (a per-owner token bucket on one
 * node). Nothing was read or written; the request may be sent again after `retryAfterMs`.
 */
export class RateLimitedError extends JsonRpcError {
  readonly retryAfterMs: number;
  /** The rate that refused: `rateLimit` (task operations), or `toolRuns.createsPerSecond` (task tool calls, named in `data`). */
  readonly limit: string;

  constructor(retryAfterMs: number, limit = 'rateLimit') {
    const wait = Math.max(1, Math.ceil(retryAfterMs));
    const what = limit === 'rateLimit' ? "this owner's rate limit is reached" : `this owner's rate of task tool calls is reached (${limit})`;
    super(ErrorCode.ServerError, `Too many requests: ${what}; retry after ${wait} ms`, limit === 'rateLimit' ? { retryAfterMs: wait } : { retryAfterMs: wait, limit });
    this.retryAfterMs = wait;
    this.limit = limit;
  }
}
