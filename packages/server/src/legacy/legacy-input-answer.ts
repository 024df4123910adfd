import { ErrorCode, type InputResponse, type JsonObject, type JsonRpcErrorObject } from '@mcp-tasks/core';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { scopeRefusal } from '../access/insufficient-scope-response.js';
import { readInputRequestId, type InputRequestTarget } from './input-request-id.js';
import type { LegacyTasksDeps } from './legacy-deps.js';
import { errorObjectOf } from './legacy-json-rpc.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** A POST body that is one JSON-RPC response (no `method`) to a request this server minted. */
export interface InputAnswer {
  readonly target: InputRequestTarget;
  readonly result?: JsonObject;
  readonly error?: unknown;
}

/** The answer `body` carries, or `undefined` when it is anything else (left to the SDK). */
export function readInputAnswer(body: unknown): InputAnswer | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
  if (message.method !== undefined || !('result' in message || 'error' in message)) return undefined;
  const target = readInputRequestId(message.id);
  if (!target) return undefined;
  return 'error' in message ? { target, error: message.error } : { target, result: message.result as JsonObject };
}

/**
 * Records a 2025-11-25 client's answer to a task's input request, POSTed on its own (the 1.x
 * client sends `{ jsonrpc, id, result | error }` and nothing else) to whichever node. The id names
 * the task and key; the task is looked up under the POSTer's own owner, so only the owner's
 * answer is recorded, through the same compare-and-set `tasks/update` uses (first answer wins,
 * unknown and answered keys ignored) and with the same wake-up of the run on its node. An error
 * answers an elicitation as declined. Sampling and roots have no "declined" result, and a stored
 * answer is always a result, so an error there ends the task `failed` with the client's error
 * (compare-and-set on a live task; the run stops as it does after a cancel). Answered `202 Accepted`, as any
 * response POSTed to the endpoint, also when nothing was recorded (unknown, foreign or expired
 * task, answered key), so no caller learns more than its own tasks; a token without the task's
 * scopes gets 403 `insufficient_scope`, a malformed result 400 with the -32602 saying why.
 */
export async function recordInputAnswer(deps: LegacyTasksDeps, answer: InputAnswer, request: Request, authInfo: AuthInfo | undefined): Promise<Response> {
  const ref = { taskId: answer.target.taskId, owner: await deps.ownerOf(authInfo, request) };
  const record = await deps.runtime.store.get(ref);
  // Own keys only: the id may name `constructor` or `__proto__`, which every plain object inherits.
  const input = record && Object.hasOwn(record.inputs, answer.target.key) ? record.inputs[answer.target.key] : undefined;
  if (!record || !input || input.response !== undefined) return accepted();
  const refused = scopeRefusal(record.scopes, authInfo);
  if (refused) return refused;
  if (answer.error !== undefined && input.request.method !== 'elicitation/create') {
    const error = clientError(input.request.method, answer.error);
    await deps.runtime.store.finish(ref, { status: 'failed', error, statusMessage: error.message });
    return accepted();
  }
  const response: InputResponse | undefined = answer.error === undefined ? answer.result : { action: 'decline' };
  if (response === undefined) return accepted();
  try {
    await deps.runtime.update(ref, { [answer.target.key]: response });
  } catch (error) {
    return Response.json(jsonRpcErrorBody(null, errorObjectOf(error)), { status: 400 });
  }
  return accepted();
}

/** The client's error, bounded and typed, as the task's error. */
function clientError(method: string, error: unknown): JsonRpcErrorObject {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message.slice(0, 500) : 'no message';
  return { code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError, message: `The client answered ${method} with an error: ${text}` };
}

function accepted(): Response {
  return new Response(null, { status: 202 });
}
