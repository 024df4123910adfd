import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * A capacity limit of this node refuses the request (open listen streams of one owner, or of the
 * whole node). `data` names the limit and its value, so a client knows which share is used up.
 */
export class LimitReachedError extends JsonRpcError {
  readonly limit: string;
  readonly max: number;

  constructor(limit: string, max: number, what: string) {
    super(ErrorCode.ServerError, `Too many ${what}: at most ${max} (${limit}); close one or retry later`, { limit, max });
    this.limit = limit;
    this.max = max;
  }
}
