import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * Thrown into a tool by `ctx.elicit` / `ctx.sample` when the request it asks for is not one the
 * protocol defines (a form elicitation without `requestedSchema`, a sampling request without
 * `maxTokens`, …). Nothing was stored and the task did not go `input_required`: a client would
 * reject the request, and the task would wait for an answer that never comes.
 */
export class InvalidInputRequestError extends JsonRpcError {
  constructor(key: string, problem: string) {
    super(ErrorCode.InvalidParams, `Invalid input request ${JSON.stringify(key)}: ${problem}`, { inputKey: key });
  }
}
