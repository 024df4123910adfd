import type { Implementation, RequestId } from '@modelcontextprotocol/server';
import type { DirectResponse } from '../exchange/direct-exchange.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const JSON_HEADERS = { 'content-type': 'application/json' } as const;
/** The one in-band error the SDK answers with an HTTP status of its own (the spec puts 400 on it). */
const MISSING_CAPABILITY = -32021;

/**
 * A handler's result as the SDK's 2026-07-28 codec sends it: the server's identity stamped into
 * `_meta` unless the result names one, in a JSON-RPC response of the SDK's key order, HTTP 200.
 */
export function resultResponse(id: RequestId, result: Record<string, unknown>, serverInfo: Implementation): DirectResponse {
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ result: withServerInfo(result, serverInfo), jsonrpc: '2.0', id }) };
}

/**
 * A handler's thrown error as the SDK sends it: its integer code (-32002 read as -32602, as the
 * codec maps it), its message and data; HTTP 200, except 400 for -32021.
 */
export function errorResponse(id: RequestId, error: unknown): DirectResponse {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
  const thrown = Number.isSafeInteger(fields.code) ? (fields.code as number) : -32603;
  const code = thrown === -32002 ? -32602 : thrown;
  const message = fields.message ?? 'Internal error';
  const body = jsonRpcErrorBody(id, { code, message: message as string, data: fields.data });
  return { status: code === MISSING_CAPABILITY ? 400 : 200, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

/** The SDK's answer when its pre-dispatch scope challenge throws: HTTP 500, in the SDK's key order. */
export function internalErrorResponse(id: RequestId): DirectResponse {
  return { status: 500, headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id }) };
}

function withServerInfo(result: Record<string, unknown>, serverInfo: Implementation): Record<string, unknown> {
  const meta = result['_meta'];
  if (meta === undefined) return { ...result, _meta: { [SERVER_INFO_KEY]: serverInfo } };
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return result;
  if ((meta as Record<string, unknown>)[SERVER_INFO_KEY] !== undefined) return result;
  return { ...result, _meta: { ...meta, [SERVER_INFO_KEY]: serverInfo } };
}
