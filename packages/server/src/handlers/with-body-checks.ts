import { ProtocolErrorCode, type McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import type { TaskListenHandler } from '../listen/task-listen.js';
import { refuseRequestBody } from './check-request-body.js';
import { TOO_DEEP } from './json-depth.js';
import { parsedBodyOf } from './parsed-body.js';
import { withFetch } from './with-fetch.js';

/**
 * `handler` behind {@link checkRequestBody}: a POST body is parsed once here (unless the host
 * passed `parsedBody`) and handed on as `parsedBody`; one the SDK would silently repair, a batch
 * or a body nested too deep is answered with its error. Text nested too deep is refused with
 * -32700 before it is parsed. A body that is not JSON is left to the SDK's own answer.
 */
export function withBodyChecks(handler: TaskListenHandler): TaskListenHandler {
  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    if (request.method.toUpperCase() !== 'POST') return handler.fetch(request, requestOptions);
    const parsed = await parsedBodyOf(request, requestOptions);
    if (!parsed) return handler.fetch(request, requestOptions);
    if (parsed.tooDeep) return Response.json({ jsonrpc: '2.0', id: null, error: { code: ProtocolErrorCode.ParseError, message: `Parse error: ${TOO_DEEP}` } }, { status: 400 });
    const parsedBody = parsed.body;
    const refusal = refuseRequestBody(parsedBody);
    if (refusal) return Response.json(refusal.response, { status: refusal.status });
    return handler.fetch(request, { ...requestOptions, parsedBody });
  }
  return withFetch(handler, fetch);
}
