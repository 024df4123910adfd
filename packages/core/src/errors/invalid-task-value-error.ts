import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/** A value handed to the task API is malformed (not JSON, too large, wrong shape). Nothing was written. */
export class InvalidTaskValueError extends JsonRpcError {
  constructor(message: string) {
    super(ErrorCode.InvalidParams, message);
  }
}
