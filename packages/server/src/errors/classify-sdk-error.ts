import type { JsonRpcErrorObject, JsonValue, RpcErrorClassifier } from '@mcp-tasks/core';
import { ProtocolError } from '@modelcontextprotocol/server';

/**
 * Recognises the SDK's protocol errors (`ProtocolError` and its subclasses) thrown by a tool, so
 * its task ends `failed` with that error's `{ code, message, data }`. Plug into the runtime's
 * `classifyError` option.
 */
export const classifySdkError: RpcErrorClassifier = (error) => {
  if (!(error instanceof ProtocolError)) return undefined;
  const object: JsonRpcErrorObject = { code: error.code, message: error.message };
  const data = toJsonValue(error.data);
  if (data !== undefined) object.data = data;
  return object;
};

/** `data` as JSON, or `undefined` when it cannot be stored (a failed task must stay storable). */
function toJsonValue(data: unknown): JsonValue | undefined {
  if (data === undefined) return undefined;
  try {
    const text = JSON.stringify(data);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}
