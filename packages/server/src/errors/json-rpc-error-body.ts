import type { JsonRpcErrorObject } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';

/** A JSON-RPC error response body, as every answer of this package that is not the SDK's writes one (a type, so it is a plain record). */
export type JsonRpcErrorBody = {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: JsonRpcErrorObject;
};

/**
 * The one place the error response's shape is written: `jsonrpc`, `id`, then `error` (the key
 * order the SDK's codec sends, which the differential test compares byte for byte); `data` only
 * when there is some. `id` is `null` when the request was never read as one.
 */
export function jsonRpcErrorBody(id: RequestId | null, error: { readonly code: number; readonly message: string; readonly data?: unknown }): JsonRpcErrorBody {
  const object: JsonRpcErrorObject = error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data as JsonRpcErrorObject['data'] };
  return { jsonrpc: '2.0', id, error: object };
}
