import { ProtocolErrorCode, type JSONRPCErrorResponse } from '@modelcontextprotocol/server';

/**
 * Checks a parsed HTTP request body before it reaches the SDK, for what the SDK would silently
 * repair: a `tasks/update` whose `params.inputResponses` is present but not an object (`null`, a
 * string, an array…) would reach the handler as `{}` and be acknowledged. Returns the -32602
 * error response to send instead, or `undefined` when the body may go on.
 *
 * ```ts
 * const refusal = checkRequestBody(parsedBody);
 * if (refusal) return Response.json(refusal);
 * return handler.fetch(request, { parsedBody, authInfo });
 * ```
 */
export function checkRequestBody(body: unknown): JSONRPCErrorResponse | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { id?: unknown; method?: unknown; params?: unknown };
  if (message.method !== 'tasks/update' || typeof message.params !== 'object' || message.params === null) return undefined;
  const inputResponses = (message.params as { inputResponses?: unknown }).inputResponses;
  if (inputResponses === undefined || isPlainObject(inputResponses)) return undefined;
  const got = inputResponses === null ? 'null' : Array.isArray(inputResponses) ? 'an array' : `a ${typeof inputResponses}`;
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: ProtocolErrorCode.InvalidParams,
      message: `tasks/update: params.inputResponses must be an object mapping input keys to answers, got ${got}`,
    },
  } as JSONRPCErrorResponse;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
