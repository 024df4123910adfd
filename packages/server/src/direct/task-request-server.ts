import type { TaskRuntime } from '@mcp-tasks/core';
import type { Implementation } from '@modelcontextprotocol/server';
import { scopeRefusal } from '../access/insufficient-scope-response.js';
import { TaskReadMemo } from '../access/task-read-memo.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import type { FastMethodServer } from '../front/fast-lane.js';
import { taskMethodOf, type TaskHandler } from '../front/method-table.js';
import { requestContextOf } from '../front/request-context.js';
import type { HandlerDeps } from '../handlers/handler-deps.js';
import type { Admission } from '../limits/admission.js';
import type { McpRequestTracer } from '../telemetry/mcp-request-tracer.js';
import { bodyBytesOf, fromWebResponse } from '../exchange/direct-exchange.js';
import { errorResponse, internalErrorResponse, resultResponse } from './encode-task-response.js';
import { readFastTaskRequest } from './fast-task-request.js';

/** What {@link taskRequestServer} needs: the same parts the SDK lane's handlers are built from. */
export interface TaskRequestServerOptions {
  readonly runtime: TaskRuntime;
  /** Stamped on every result's `_meta`, as the SDK stamps its McpServer's identity. */
  readonly serverInfo: Implementation;
  readonly tracer: McpRequestTracer;
  /** Admission: the same limits (and refusal hold) the SDK lane's requests meet. */
  readonly admission: Admission;
  readonly onerror?: ((error: Error) => void) | undefined;
  /** Wraps `tasks/cancel`, as the SDK lane's is wrapped (a proxied task is cancelled upstream too). */
  readonly cancelling?: ((deps: HandlerDeps, cancel: TaskHandler) => TaskHandler) | undefined;
}

/**
 * The fast lane's way through a 2026-07-28 `tasks/*` row of the method table, without a
 * per-request McpServer, the SDK's dispatch or a WHATWG round trip: the row's handler, with the
 * same owner, admission, scope challenge and span as the SDK lane, and the same bytes out
 * (`readFastTaskRequest` lets only requests through whose every check the SDK would pass).
 * Returns `undefined` for anything else, which goes on to the SDK lane unchanged.
 */
export function taskRequestServer(options: TaskRequestServerOptions): FastMethodServer {
  const { runtime, serverInfo, tracer, admission } = options;
  const report = (error: unknown) => {
    try {
      options.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A reporting callback must not change the answer.
    }
  };

  return async (request, classified, ownerOnce) => {
    const row = taskMethodOf(classified.method);
    if (!row) return undefined;
    const fast = readFastTaskRequest(request);
    if (!fast) return undefined;
    const authInfo = request.authInfo;
    const owner = await ownerOnce();
    if (owner === undefined) return undefined;
    const admitted = await admission.admitRequest(classified, row.limited, owner, authInfo !== undefined, bodyBytesOf(request));
    if (admitted.refused) return admitted.refused;
    const { leave } = admitted;
    try {
      const memo = new TaskReadMemo();
      const ref = { taskId: fast.taskId, owner };
      if (authInfo !== undefined && declaresTasksExtension({ mcpReq: { envelope: fast.envelope } })) {
        // The scope challenge the SDK runs before dispatch (taskScopeChallenge), with its read left for the handler.
        try {
          const task = await runtime.store.read(ref);
          const refused = task ? scopeRefusal(task.scopes, authInfo) : undefined;
          if (refused) return await fromWebResponse(refused);
          memo.remember(ref, task);
        } catch (error) {
          report(error);
          return internalErrorResponse(fast.id);
        }
      }
      const deps: HandlerDeps = { runtime, ownerOf: () => Promise.resolve(owner), memo };
      const ctx = requestContextOf(fast, authInfo);
      try {
        const handle: TaskHandler = fast.method === 'tasks/cancel' && options.cancelling ? options.cancelling(deps, row.handler(deps)) : row.handler(deps);
        const result = await tracer.trace({ method: row.span, taskId: fast.taskId }, ctx, () => handle(fast.params, ctx));
        return resultResponse(fast.id, result as Record<string, unknown>, serverInfo);
      } catch (error) {
        return errorResponse(fast.id, error);
      }
    } finally {
      leave();
    }
  };
}
