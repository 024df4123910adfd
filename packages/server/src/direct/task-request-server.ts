import { ownerKey, type TaskRuntime } from '@mcp-tasks/core';
import type { Implementation, Result, ServerContext } from '@modelcontextprotocol/server';
import { insufficientScopeResponse } from '../auth/insufficient-scope-response.js';
import { TaskReadMemo } from '../auth/task-read-memo.js';
import { missingScopes } from '../auth/task-scopes.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import type { HandlerDeps } from '../handlers/handler-deps.js';
import { tasksCancel } from '../handlers/tasks-cancel.js';
import { tasksGet } from '../handlers/tasks-get.js';
import { tasksUpdate } from '../handlers/tasks-update.js';
import type { Admission } from '../limits/admission.js';
import type { OwnerResolver } from '../owner/owner-resolver.js';
import type { McpRequestTracer } from '../telemetry/mcp-request-tracer.js';
import { bodyBytesOf, fromWebResponse, type DirectRequest, type DirectResponse } from '../exchange/direct-exchange.js';
import { directOwnerOf } from './direct-owner.js';
import { errorResponse, resultResponse } from './encode-task-response.js';
import { readFastTaskRequest, type FastTaskMethod, type FastTaskRequest } from './fast-task-request.js';

/** What {@link taskRequestServer} needs: the same parts the SDK path's handlers are built from. */
export interface TaskRequestServerOptions {
  readonly runtime: TaskRuntime;
  readonly resolveOwner: OwnerResolver;
  /** The server part of the owners (the McpServer's name). */
  readonly serverName: string;
  /** Stamped on every result's `_meta`, as the SDK stamps its McpServer's identity. */
  readonly serverInfo: Implementation;
  readonly tracer: McpRequestTracer;
  /** Admission: the same limits (and refusal hold) the SDK lane's requests meet. */
  readonly admission: Admission;
  readonly onerror?: ((error: Error) => void) | undefined;
  /** Wraps `tasks/cancel`, as the SDK path's is wrapped (a proxied task is cancelled upstream too). */
  readonly cancelling?: ((deps: HandlerDeps, cancel: TaskHandler) => TaskHandler) | undefined;
}

type TaskHandler = (params: unknown, ctx: ServerContext) => Promise<Result>;
const HANDLERS: Readonly<Record<FastTaskMethod, (deps: HandlerDeps) => TaskHandler>> = {
  'tasks/get': tasksGet,
  'tasks/update': tasksUpdate,
  'tasks/cancel': tasksCancel,
};

/**
 * Serves the 2026-07-28 `tasks/get`, `tasks/update` and `tasks/cancel` without a per-request
 * McpServer, the SDK's dispatch or a WHATWG round trip: the same handlers, owner, rate limit,
 * scope challenge and spans as the SDK path, and the same bytes out (`readFastTaskRequest` lets
 * only requests through whose every check the SDK would pass). Returns `undefined` for anything
 * else, which the caller hands to the SDK path unchanged.
 */
export function taskRequestServer(options: TaskRequestServerOptions): (request: DirectRequest) => Promise<DirectResponse | undefined> {
  const { runtime, resolveOwner, serverName, serverInfo, tracer, admission } = options;
  const report = (error: unknown) => {
    try {
      options.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A reporting callback must not change the answer.
    }
  };

  return async (request) => {
    const fast = readFastTaskRequest(request);
    if (!fast) return undefined;
    const authInfo = request.authInfo;
    const owner = await directOwnerOf(resolveOwner, serverName, request);
    if (owner === undefined) return undefined;
    const admitted = await admission.admit({ ownerKey: ownerKey(owner), authenticated: authInfo !== undefined, taskId: fast.taskId }, 'task', fast.id, bodyBytesOf(request));
    if (admitted.refused) return admitted.refused;
    const { leave } = admitted;
    try {
      const memo = new TaskReadMemo();
      const ref = { taskId: fast.taskId, owner };
      if (authInfo !== undefined && declaresTasksExtension({ mcpReq: { envelope: fast.envelope } })) {
        // The scope challenge the SDK runs before dispatch (taskScopeChallenge), with its read left for the handler.
        try {
          const task = await runtime.store.read(ref);
          if (task && missingScopes(task.scopes, authInfo).length > 0) return await fromWebResponse(insufficientScopeResponse(task.scopes, authInfo));
          memo.remember(ref, task);
        } catch (error) {
          report(error);
          return internalServerError(fast);
        }
      }
      const deps: HandlerDeps = { runtime, ownerOf: () => Promise.resolve(owner), memo };
      const ctx = contextOf(fast, authInfo);
      try {
        const handle = fast.method === 'tasks/cancel' && options.cancelling ? options.cancelling(deps, tasksCancel(deps)) : HANDLERS[fast.method](deps);
        const result = await tracer.trace({ method: fast.method, taskId: fast.taskId }, ctx, () => handle(fast.params, ctx));
        return resultResponse(fast.id, result as Record<string, unknown>, serverInfo);
      } catch (error) {
        return errorResponse(fast.id, error);
      }
    } finally {
      leave();
    }
  };
}

/** What the handlers and the tracer read of the SDK's context, built as the SDK builds it. */
function contextOf(fast: FastTaskRequest, authInfo: DirectRequest['authInfo']): ServerContext {
  return {
    mcpReq: {
      id: fast.id,
      method: fast.method,
      _meta: fast.meta,
      envelope: fast.envelope,
      ...(fast.inputResponses === undefined ? {} : { inputResponses: fast.inputResponses }),
      ...(fast.droppedInputResponseKeys === undefined ? {} : { droppedInputResponseKeys: fast.droppedInputResponseKeys }),
    },
    http: authInfo === undefined ? undefined : { authInfo },
  } as unknown as ServerContext;
}

/** The SDK's answer when its pre-dispatch scope challenge throws. */
function internalServerError(fast: FastTaskRequest): DirectResponse {
  return { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: fast.id }) };
}
