import { isWellFormedTaskId } from '@mcp-tasks/core';
import type { RequestId } from '@modelcontextprotocol/server';
import type { DirectRequest } from '../exchange/direct-exchange.js';
import { taskMethodOf, type TaskMethod2026 } from '../front/method-table.js';
import { isPlainObject, readModernRequest } from './modern-request.js';

/** The project's own methods the direct path serves (the fast rows of the method table). */
export type FastTaskMethod = TaskMethod2026;

/** A `tasks/*` request the direct path may serve, with what the SDK would hand its handler. */
export interface FastTaskRequest {
  readonly id: RequestId;
  readonly method: FastTaskMethod;
  readonly taskId: string;
  /** `params` as the handler sees them (the SDK lifts the envelope and the retry fields out). */
  readonly params: Record<string, unknown>;
  /** `params._meta` without the envelope keys (`undefined` when nothing is left). */
  readonly meta: Record<string, unknown> | undefined;
  readonly envelope: Record<string, unknown>;
  /** The bare answers of `inputResponses` (present when the request carried the field). */
  readonly inputResponses?: Record<string, unknown>;
  /** Keys of `inputResponses` whose value is not a bare result object. */
  readonly droppedInputResponseKeys?: readonly string[];
}

/**
 * The request, when it is one the direct path answers exactly as the SDK would: a 2026-07-28
 * `tasks/get|update|cancel` ({@link readModernRequest}) with `Mcp-Name` equal to a well-formed
 * `params.taskId`, and `inputResponses` an object when present. Anything else is `undefined`: the
 * SDK answers it, so every refusal keeps the SDK's words.
 */
export function readFastTaskRequest(request: DirectRequest): FastTaskRequest | undefined {
  const read = readModernRequest(request, taskIdOf);
  if (!read) return undefined;
  const fast: FastTaskRequest = {
    id: read.id,
    method: read.method as FastTaskMethod,
    taskId: read.rawParams['taskId'] as string,
    params: read.params,
    meta: read.meta,
    envelope: read.envelope,
  };
  if (!('inputResponses' in read.rawParams)) return fast;
  const { accepted, dropped } = partitionInputResponses(read.rawParams['inputResponses'] as Record<string, unknown>);
  return { ...fast, inputResponses: accepted, ...(dropped.length > 0 ? { droppedInputResponseKeys: dropped } : {}) };
}

/** The task id a `tasks/*` request must name in `Mcp-Name`, when the direct path serves it. */
function taskIdOf(method: string, params: Record<string, unknown>): string | undefined {
  if (taskMethodOf(method)?.fast !== true) return undefined;
  const taskId = params['taskId'];
  if (typeof taskId !== 'string' || !isWellFormedTaskId(taskId)) return undefined;
  if ('inputResponses' in params && !isPlainObject(params['inputResponses'])) return undefined;
  return taskId;
}

/** As the SDK splits `inputResponses`: bare result objects are answers, anything else (a `{method, result}` wrapper) is dropped by key. */
function partitionInputResponses(inputResponses: Record<string, unknown>): { accepted: Record<string, unknown>; dropped: string[] } {
  const kept: Array<[string, unknown]> = [];
  const dropped: string[] = [];
  for (const [key, entry] of Object.entries(inputResponses)) {
    if (!isPlainObject(entry) || 'method' in entry || 'result' in entry) dropped.push(key);
    else kept.push([key, entry]);
  }
  // Defined, not assigned: a key `__proto__` stays an (ignored) key instead of replacing the object's prototype.
  return { accepted: Object.fromEntries(kept), dropped };
}
