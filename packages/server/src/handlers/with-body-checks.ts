import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import type { TaskListenHandler } from '../listen/task-listen.js';
import { checkRequestBody } from './check-request-body.js';
import { parsedBodyOf } from './parsed-body.js';
import { withFetch } from './with-fetch.js';

/**
 * `handler` behind {@link checkRequestBody}: a POST body is parsed once here (unless the host
 * passed `parsedBody`) and handed on as `parsedBody`; one the SDK would silently repair is
 * answered with its -32602 error. A body that is not JSON is left to the SDK's own answer.
 */
export function withBodyChecks(handler: TaskListenHandler): TaskListenHandler {
  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    if (request.method.toUpperCase() !== 'POST') return handler.fetch(request, requestOptions);
    const parsed = await parsedBodyOf(request, requestOptions);
    if (!parsed) return handler.fetch(request, requestOptions);
    const parsedBody = parsed.body;
    const refusal = checkRequestBody(parsedBody);
    if (refusal) return Response.json(refusal);
    return handler.fetch(request, { ...requestOptions, parsedBody });
  }
  return withFetch(handler, fetch);
}
