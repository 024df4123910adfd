import { ErrorCode, JsonRpcError, type JsonRpcErrorObject } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { toProtocolError } from '../errors/to-protocol-error.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** A JSON-RPC result as a JSON response. */
export function rpcResult(id: RequestId, result: Record<string, unknown>): Response {
  return Response.json({ jsonrpc: '2.0', id, result });
}

/**
 * A JSON-RPC error as a JSON response: a core error keeps its code, message and data; anything
 * else becomes -32603 with a reference, its details logged, never sent.
 */
export function rpcError(id: RequestId | null, error: unknown): Response {
  return Response.json(jsonRpcErrorBody(id, errorObjectOf(error)));
}

export function errorObjectOf(error: unknown): JsonRpcErrorObject {
  if (error instanceof JsonRpcError) return error.toJSON();
  const protocol = toProtocolError(error);
  const object: JsonRpcErrorObject = { code: protocol.code, message: protocol.message };
  if (protocol.data !== undefined) object.data = protocol.data as JsonRpcErrorObject['data'];
  return object;
}

/** -32602 saying what is wrong with a parameter. */
export function invalidParams(message: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, message);
}
