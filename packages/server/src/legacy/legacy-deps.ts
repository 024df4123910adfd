import { linkToCreator, TaskNotFoundError, type TaskOwner, type TaskRecord, type TaskRef, type TaskRuntime } from '@mcp-tasks/core';
import type { AuthInfo, RequestId } from '@modelcontextprotocol/server';
import { scopeRefusal } from '../access/insufficient-scope-response.js';
import type { ListenStreamCaps } from '../limits/listen-stream-caps.js';
import type { RefusalHold } from '../limits/refusal-hold.js';
import type { McpRequestTracer } from '../telemetry/mcp-request-tracer.js';
import type { ListTasksPolicy } from './legacy-capability.js';
import { rpcError } from './legacy-json-rpc.js';

/** What the 2025-11-25 serving needs: the runtime, and the owner of a request, resolved as for every other request. */
export interface LegacyTasksDeps {
  readonly runtime: TaskRuntime;
  ownerOf(authInfo: AuthInfo | undefined, request: Request): Promise<TaskOwner>;
  readonly listTasks: ListTasksPolicy;
  /** Interval of `: keepalive` comments on a `tasks/result` stream. */
  readonly keepAliveMs: number;
  readonly onerror: (error: Error) => void;
  /** Caps on open `tasks/result` streams per authenticated owner and per node (apart from the listens'): each stream takes a slot. */
  readonly streamCaps?: ListenStreamCaps;
  /** Paces the refusals of those caps, as a task listen's are. */
  readonly refusalHold?: RefusalHold;
  /** Request spans, as the SDK path's `tasks/*` get them. */
  readonly tracer?: McpRequestTracer;
  /** Told of each task this serving cancelled, at once (a proxied task's upstream task is cancelled from here, as 2026's `tasks/cancel` does). */
  readonly cancelled?: (ref: TaskRef) => void;
}

/** One HTTP request to the 2025-11-25 serving: what every answer needs. */
export interface LegacyCall {
  readonly request: Request;
  readonly authInfo: AuthInfo | undefined;
  readonly id: RequestId;
  readonly params: Record<string, unknown>;
}

/**
 * The caller's task `taskId` and its row, or the answer to send instead: the not-found error an
 * unknown id gets for a foreign or expired one (-32602), HTTP 403 `insufficient_scope` for a
 * token without the task's scopes (as `tasks/get` answers 2026-07-28 clients).
 */
export async function ownedTask(deps: LegacyTasksDeps, call: LegacyCall, taskId: string): Promise<{ ref: TaskRef; record: TaskRecord } | Response> {
  const ref: TaskRef = { taskId, owner: await deps.ownerOf(call.authInfo, call.request) };
  const record = await deps.runtime.store.get(ref);
  if (!record) return rpcError(call.id, new TaskNotFoundError());
  const refused = scopeRefusal(record.scopes, call.authInfo);
  if (refused) return refused;
  // The request's span (tasks/get, tasks/cancel, the tasks/result stream) joins the task's trace.
  linkToCreator(record);
  return { ref, record };
}
