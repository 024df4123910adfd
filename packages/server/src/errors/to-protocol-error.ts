import { JsonRpcError } from '@mcp-tasks/core';
import { ProtocolError } from '@modelcontextprotocol/server';

/**
 * The SDK error that answers a request with exactly the core error's code, message and data.
 * Anything that is not a core `JsonRpcError` is returned as it is.
 */
export function toProtocolError(error: unknown): unknown {
  if (error instanceof JsonRpcError) return new ProtocolError(error.code, error.message, error.data);
  return error;
}
