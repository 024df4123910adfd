import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The one answer for an id that is unknown, expired, or owned by someone else. Its message is
 * the same in all three cases on purpose: a caller must not learn that another owner's task exists.
 */
export class TaskNotFoundError extends JsonRpcError {
  constructor() {
    super(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
  }
}
