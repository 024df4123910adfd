import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The caller sent more task operations than its share allows (a per-owner token bucket on one
 * node). Nothing was read or written; the request may be sent again after `retryAfterMs`.
 */
export class RateLimitedError extends JsonRpcError {
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number) {
    const wait = Math.max(1, Math.ceil(retryAfterMs));
    super(ErrorCode.ServerError, `Too many requests: this owner's rate limit is reached; retry after ${wait} ms`, { retryAfterMs: wait });
    this.retryAfterMs = wait;
  }
}
