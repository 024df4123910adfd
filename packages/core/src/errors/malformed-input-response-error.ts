import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * A `tasks/update` answered a key the task is waiting on with something that is not the bare
 * result object of its request (a `{method, result}` wrapper, a string, `null`). Nothing of the
 * update was stored; the same value under a key that is not outstanding is ignored instead.
 */
export class MalformedInputResponseError extends JsonRpcError {
  constructor(readonly key: string) {
    super(
      ErrorCode.InvalidParams,
      `inputResponses.${key} must be the bare result object of the request it answers (not a {method, result} wrapper or a non-object)`,
      { invalidKeys: [key] },
    );
  }
}
