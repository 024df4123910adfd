import { isLegacyRequest, type McpHandlerRequestOptions, type McpHttpHandler } from '@modelcontextprotocol/server';
import { parsedBodyOf } from '../exchange/parsed-body.js';
import { classifyRequest } from '../exchange/classify-request.js';
import { readInputAnswer, recordInputAnswer } from './legacy-input-answer.js';
import type { LegacyCall, LegacyTasksDeps } from './legacy-deps.js';
import { rpcError } from './legacy-json-rpc.js';
import { legacyRequestContext } from './legacy-request-context.js';
import { legacyTasksCancel, legacyTasksGet, legacyTasksList } from './legacy-task-requests.js';
import { legacyTasksResult, type ResultStream } from './legacy-task-result.js';

/** The handler with 2025-11-25 tasks in front, and its open `tasks/result` streams. */
export interface LegacyTasksHandler extends McpHttpHandler {
  /** Ends every open `tasks/result` stream (with an error that says to call again). */
  endStreams(): void;
  readonly openStreams: number;
}

type Serve = (deps: LegacyTasksDeps, call: LegacyCall) => Promise<Response>;

/**
 * 2025-11-25 tasks in front of the SDK's handler, whose stateless legacy serving builds a fresh
 * server per request and could neither stream a task's input requests nor receive their answers:
 * - a POST that is only a JSON-RPC response to a task's input request (its id names the task and
 *   key) is recorded here, on whichever node it lands ({@link recordInputAnswer});
 * - 2025-era `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result` are served here from
 *   the task rows, in that revision's shapes and error codes.
 * Everything else goes to `handler` unchanged (`initialize`, `tools/*`, 2026-07-28 traffic).
 */
export function withLegacyTasks(handler: McpHttpHandler, deps: LegacyTasksDeps): LegacyTasksHandler {
  const open = new Set<ResultStream>();
  const methods: Record<string, Serve> = {
    'tasks/get': legacyTasksGet,
    'tasks/list': legacyTasksList,
    'tasks/cancel': legacyTasksCancel,
    'tasks/result': (d, call) => legacyTasksResult(d, call, open),
  };

  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    if (request.method.toUpperCase() !== 'POST') return handler.fetch(request, requestOptions);
    const parsed = await parsedBodyOf(request, requestOptions);
    if (!parsed || parsed.tooDeep) return handler.fetch(request, requestOptions);
    const body = parsed.body;
    const forward = { ...requestOptions, parsedBody: body };
    const authInfo = requestOptions?.authInfo;
    const answer = readInputAnswer(body);
    if (answer) return recordInputAnswer(deps, answer, request, authInfo);
    const classified = classifyRequest(body);
    const call = classified && classified.id !== null && Object.hasOwn(methods, classified.method) ? { method: classified.method, id: classified.id, params: classified.params as Record<string, unknown> } : undefined;
    const serve = call && methods[call.method];
    if (!call || !serve || !(await isLegacyRequest(request, body))) return handler.fetch(request, forward);
    const respond = async () => {
      try {
        return await serve(deps, { request, authInfo, id: call.id, params: call.params });
      } catch (error) {
        return rpcError(call.id, error);
      }
    };
    if (!deps.tracer) return respond();
    const taskId = call.params['taskId'];
    return deps.tracer.trace({ method: call.method, ...(typeof taskId === 'string' ? { taskId } : {}) }, legacyRequestContext(call, request, authInfo), respond);
  }

  return {
    fetch,
    notify: handler.notify,
    bus: handler.bus,
    close: async () => {
      for (const stream of [...open]) stream.end();
      await handler.close();
    },
    endStreams: () => {
      for (const stream of [...open]) stream.end();
    },
    get openStreams() {
      return open.size;
    },
  };
}
