import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import { parsedBodyOf } from '../handlers/parsed-body.js';
import { withFetch } from '../handlers/with-fetch.js';
import type { TaskListenHandler } from '../listen/task-listen.js';
import { directRequestOf, toWebResponse, type DirectRequest, type DirectResponse } from './direct-exchange.js';

/** Serves one request on the direct path, or `undefined` when it is the SDK's. */
export type DirectServe = (request: DirectRequest) => Promise<DirectResponse | undefined>;

/** A handler whose 2026-07-28 `tasks/*` and task `tools/call` requests a host can also hand over without a WHATWG `Request`. */
export interface McpTasksHandler extends TaskListenHandler {
  /**
   * Serves `request` when it is a 2026-07-28 `tasks/get|update|cancel`, or a `tools/call` that
   * becomes a task, that the direct path answers;
   * `undefined` otherwise, and the host then calls `fetch` as for any request. A node:http host
   * that already parsed the body (and verified the token) skips the WHATWG round trip this way.
   */
  serveDirect: DirectServe;
}

/** `handler` with `serve` in front of it for the requests `serve` takes. */
export function withTaskRequests(handler: TaskListenHandler, serve: DirectServe): McpTasksHandler {
  async function fetch(request: Request, requestOptions?: McpHandlerRequestOptions): Promise<Response> {
    if (request.method.toUpperCase() === 'POST') {
      const parsed = await parsedBodyOf(request, requestOptions);
      if (parsed && !parsed.tooDeep) {
        const direct = await serve(directRequestOf(request, parsed.body, requestOptions?.authInfo));
        if (direct) return toWebResponse(direct);
        return handler.fetch(request, { ...requestOptions, parsedBody: parsed.body });
      }
    }
    return handler.fetch(request, requestOptions);
  }
  return Object.assign(withFetch(handler, fetch), { serveDirect: serve });
}
