import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import type { TaskListenHandler } from '../listen/task-listen.js';

/** `handler` answering through `fetch` (a layer in front of it); its streams, bus and close stay the handler's own. */
export function withFetch(
  handler: TaskListenHandler,
  fetch: (request: Request, requestOptions?: McpHandlerRequestOptions) => Promise<Response>,
): TaskListenHandler {
  return {
    fetch,
    notify: handler.notify,
    bus: handler.bus,
    endStreams: () => handler.endStreams(),
    close: () => handler.close(),
    get openStreams() {
      return handler.openStreams;
    },
    get following() {
      return handler.following;
    },
  };
}
