import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/** A `tasks/list` cursor this server did not hand out (or no longer understands). */
export class InvalidCursorError extends JsonRpcError {
  constructor() {
    super(ErrorCode.InvalidParams, 'Invalid cursor: pass back a nextCursor exactly as a tasks/list result gave it');
  }
}
