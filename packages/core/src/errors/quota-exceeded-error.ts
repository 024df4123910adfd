import type { JsonObject } from '../json/json-value.js';
import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The owner already has `limit` live tasks, or keeps too much (`StoredBytesExceededError`).
 * The MCP layer runs an optional task tool inline instead; a required one is refused with this
 * error (-32600).
 */
export class QuotaExceededError extends JsonRpcError {
  readonly limit: number;

  constructor(limit: number, message?: string, data?: JsonObject) {
    super(
      ErrorCode.InvalidRequest,
      message ?? `Too many live tasks: this owner already has ${limit} (maxPerPrincipal); wait for one to finish or cancel one`,
      data ?? { maxPerPrincipal: limit },
    );
    this.limit = limit;
  }
}
