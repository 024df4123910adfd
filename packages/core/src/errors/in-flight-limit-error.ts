import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The caller already has as many task operations under way on this node as its share allows
 * (a per-owner cap on requests in flight). Nothing was read or written; the request may be sent
 * again once one of the caller's own requests is answered.
 */
export class InFlightLimitError extends JsonRpcError {
  readonly limit: string;
  readonly max: number;

  constructor(limit: string, max: number) {
    super(ErrorCode.ServerError, `Too many requests in flight for this owner: at most ${max} (${limit}); retry once one is answered`, { limit, max });
    this.limit = limit;
    this.max = max;
  }
}
