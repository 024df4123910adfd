import { ErrorCode } from '../errors/error-codes.js';
import { JsonRpcError, type JsonRpcErrorObject } from '../errors/json-rpc-error.js';

/**
 * Recognises a JSON-RPC error thrown by a tool. The runtime knows its own {@link JsonRpcError};
 * the MCP layer adds the SDK's error classes through this hook. Anything it does not recognise
 * ends the task as an internal error whose message leaks nothing.
 */
export type RpcErrorClassifier = (error: unknown) => JsonRpcErrorObject | undefined;

export const classifyOwnRpcError: RpcErrorClassifier = (error) =>
  error instanceof JsonRpcError ? error.toJSON() : undefined;

/** The error stored for a throw nobody recognised. */
export const INTERNAL_RUN_ERROR: JsonRpcErrorObject = {
  code: ErrorCode.InternalError,
  message: 'Internal error while running the tool',
};
