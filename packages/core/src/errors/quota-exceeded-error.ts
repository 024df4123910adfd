import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The owner already has `limit` live tasks. The MCP layer runs an optional task tool inline
 * instead; a required one is refused with this error (-32600).
 */
export class QuotaExceededError extends JsonRpcError {
  readonly limit: number;

  constructor(limit: number) {
    super(
      ErrorCode.InvalidRequest,
      `Too many live tasks: this owner already has ${limit} (maxPerPrincipal); wait for one to finish or cancel one`,
      { maxPerPrincipal: limit },
    );
    this.limit = limit;
  }
}
