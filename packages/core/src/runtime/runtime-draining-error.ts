import { ErrorCode } from '../errors/error-codes.js';
import { JsonRpcError } from '../errors/json-rpc-error.js';

/** The node is shutting down and takes no new tasks; the MCP layer serves the call inline or refuses it. */
export class RuntimeDrainingError extends JsonRpcError {
  constructor() {
    super(ErrorCode.InternalError, 'This server is shutting down and takes no new tasks; retry the call');
  }
}
