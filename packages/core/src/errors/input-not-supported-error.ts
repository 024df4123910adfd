import type { JsonObject } from '../json/json-value.js';
import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * Thrown into a tool by `ctx.elicit` / `ctx.sample` / `ctx.roots` when the request that created
 * the task did not declare the client capability the input needs (elicitation form or url mode,
 * sampling, sampling with tools, roots). Nothing was stored and the task did not go
 * `input_required`. Carries -32021 with `data.requiredCapabilities` naming only what is missing,
 * as the inline path's refusal does.
 */
export class InputNotSupportedError extends JsonRpcError {
  /** The missing capabilities, in the `ClientCapabilities` shape. */
  readonly requiredCapabilities: JsonObject;

  constructor(key: string, method: string, requiredCapabilities: JsonObject) {
    super(
      ErrorCode.MissingRequiredClientCapability,
      `Cannot request input ${JSON.stringify(key)} (${method}): the client capabilities of the request that created the task do not declare ${describe(requiredCapabilities)}`,
      { requiredCapabilities },
    );
    this.requiredCapabilities = requiredCapabilities;
  }
}

function describe(capabilities: JsonObject): string {
  return Object.entries(capabilities)
    .map(([name, members]) => {
      const nested = typeof members === 'object' && members !== null && !Array.isArray(members) ? Object.keys(members) : [];
      return nested.length > 0 ? nested.map((member) => `${name}.${member}`).join(', ') : name;
    })
    .join(', ');
}
