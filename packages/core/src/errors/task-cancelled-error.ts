import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * Thrown into a tool by `ctx.sample` and `ctx.roots` when its task is cancelled while it waits.
 * The task is already `cancelled`, so the runtime records nothing when the tool lets it escape.
 */
export class TaskCancelledError extends JsonRpcError {
  constructor() {
    super(ErrorCode.InvalidRequest, 'The task was cancelled');
  }
}
