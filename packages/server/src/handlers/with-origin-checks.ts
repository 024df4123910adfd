import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import type { TaskListenHandler } from '../listen/task-listen.js';
import { forbiddenBody, foreignRequest, type OriginPolicy } from './request-origin.js';
import { withFetch } from './with-fetch.js';

/**
 * `handler` behind {@link foreignRequest}: a request whose Host or Origin `policy` does not
 * serve is answered 403 before anything reads its body. The Host is the header, else the
 * request URL's (a fetch host that builds its `Request` from the URL alone).
 */
export function withOriginChecks(handler: TaskListenHandler, policy: OriginPolicy): TaskListenHandler {
  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    const host = request.headers.get('host') ?? new URL(request.url).host;
    const refusal = foreignRequest(host, request.headers.get('origin') ?? undefined, policy);
    if (refusal) return new Response(forbiddenBody(refusal), { status: 403, headers: { 'content-type': 'application/json' } });
    return handler.fetch(request, requestOptions);
  }
  return withFetch(handler, fetch);
}
