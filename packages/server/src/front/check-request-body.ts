import { isWellFormedTaskId } from '@mcp-tasks/core';
import { ProtocolErrorCode, type JSONRPCErrorResponse } from '@modelcontextprotocol/server';
import { TOO_DEEP, valueTooDeep } from '../exchange/json-depth.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** Methods whose `params.taskId` names one task. */
const TASK_ID_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel', 'tasks/result']);

/** A tool name as the spec advises: 1–128 characters of A–Z, a–z, 0–9, `_`, `-` and `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Checks a parsed HTTP request body before it reaches the SDK, for what the SDK would echo,
 * silently repair or serve beyond what MCP allows:
 * - a JSON-RPC batch (an array): MCP removed batches in 2025-06-18, and the SDK's 2025-11-25
 *   serving still answered one, each element past every check here (one batch made 100 tasks).
 *   It is -32600 on both revisions.
 * - JSON nested deeper than the bound (`MAX_JSON_DEPTH`): -32602, before anything walks it recursively.
 * - a `taskId` that cannot be a task id (task ids have a fixed, URL-safe form) or a tool name that
 *   cannot be one: the SDK's header checks copy such a value, whatever its size or control
 *   characters, into the error it answers and logs. They get the same answer an unknown task or
 *   tool gets, without the value.
 * - a `tasks/update` whose `params.inputResponses` is present but not an object (`null`, a
 *   string, an array…) would reach the handler as `{}` and be acknowledged.
 * Returns the -32602 error response to send instead, or `undefined` when the body may go on.
 *
 * ```ts
 * const refusal = checkRequestBody(parsedBody);
 * if (refusal) return Response.json(refusal);
 * return handler.fetch(request, { parsedBody, authInfo });
 * ```
 */
export function checkRequestBody(body: unknown): JSONRPCErrorResponse | undefined {
  return refuseRequestBody(body)?.response;
}

/** A body refused by {@link checkRequestBody}, with the HTTP status it is answered with. */
export interface BodyRefusal {
  /** 400 for what is no MCP request at all (a batch, a body too deep); 200 for a request's bad params, as the SDK answers those. */
  readonly status: number;
  readonly response: JSONRPCErrorResponse;
}

/** {@link checkRequestBody} with the HTTP status of its refusal. */
export function refuseRequestBody(body: unknown): BodyRefusal | undefined {
  if (Array.isArray(body)) {
    return { status: 400, response: errorResponse(null, ProtocolErrorCode.InvalidRequest, 'Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per request') };
  }
  if (typeof body !== 'object' || body === null) return undefined;
  if (valueTooDeep(body)) return { status: 400, response: errorResponse(idOf(body), ProtocolErrorCode.InvalidParams, `Invalid params: ${TOO_DEEP}`) };
  const response = checkMessage(body);
  return response === undefined ? undefined : { status: 200, response };
}

function checkMessage(body: object): JSONRPCErrorResponse | undefined {
  const message = body as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof message.params !== 'object' || message.params === null) return undefined;
  const params = message.params as { taskId?: unknown; name?: unknown; inputResponses?: unknown };
  const id = idOf(message);
  if (typeof message.method === 'string' && TASK_ID_METHODS.has(message.method) && typeof params.taskId === 'string' && !isWellFormedTaskId(params.taskId)) {
    // Exactly what an unknown id gets (TaskNotFoundError): no caller tells a malformed id from a foreign one.
    return invalidParams(id, 'Failed to retrieve task: Task not found');
  }
  if (message.method === 'tools/call' && typeof params.name === 'string' && !TOOL_NAME.test(params.name)) {
    return invalidParams(id, 'Unknown tool: the name is not a tool name (1–128 characters of A–Z, a–z, 0–9, _, - and .)');
  }
  if (message.method !== 'tasks/update') return undefined;
  const inputResponses = params.inputResponses;
  if (inputResponses === undefined || isPlainObject(inputResponses)) return undefined;
  const got = inputResponses === null ? 'null' : Array.isArray(inputResponses) ? 'an array' : `a ${typeof inputResponses}`;
  return invalidParams(id, `tasks/update: params.inputResponses must be an object mapping input keys to answers, got ${got}`);
}

function idOf(message: { id?: unknown }): string | number | null {
  return typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
}

function invalidParams(id: string | number | null, message: string): JSONRPCErrorResponse {
  return errorResponse(id, ProtocolErrorCode.InvalidParams, message);
}

function errorResponse(id: string | number | null, code: number, message: string): JSONRPCErrorResponse {
  return jsonRpcErrorBody(id, { code, message }) as JSONRPCErrorResponse;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
