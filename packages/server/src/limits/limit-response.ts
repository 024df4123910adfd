import type { JsonRpcError } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import { toWebResponse } from '../exchange/direct-exchange.js';
import { limitRefusal } from './limit-refusal.js';

/** {@link limitRefusal} as a WHATWG `Response`, for the SDK path. */
export function limitResponse(id: RequestId | null, error: JsonRpcError): Response {
  return toWebResponse(limitRefusal(id, error));
}
