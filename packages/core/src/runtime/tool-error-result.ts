import type { JsonObject } from '../json/json-value.js';

/**
 * The `CallToolResult` of a tool that threw a plain error: exactly what the SDK's inline
 * `tools/call` answers (its `createToolError`), so a task and an inline run of the same tool end
 * the same way: `completed` with `isError: true` and the error's message.
 */
export function toolErrorResult(error: unknown): JsonObject {
  const text = error instanceof Error ? error.message : String(error);
  return { content: [{ type: 'text', text }], isError: true };
}
