import type { Result, ServerContext } from '@modelcontextprotocol/server';
import type { HandlerDeps } from '../handlers/handler-deps.js';
import { tasksCancel } from '../handlers/tasks-cancel.js';
import { tasksGet } from '../handlers/tasks-get.js';
import { tasksUpdate } from '../handlers/tasks-update.js';

/** A `tasks/*` handler as both lanes call it: the SDK's dispatch on one, the fast lane on the other. */
export type TaskHandler = (params: unknown, ctx: ServerContext) => Promise<Result>;

/**
 * How one method of a revision goes through the pipeline. The two lanes read the same row: the
 * SDK lane registers `handler` on its McpServer (the SDK's codec encodes), the fast lane calls it
 * and encodes with `direct/encode-task-response.ts`; both admit it as `limited`, check `scoped`
 * after the owner, and trace it under `span`.
 */
export interface MethodRow {
  /** Which of admission's limits count it: a `tasks/*`-like request, or the start of a task. */
  readonly limited: 'task' | 'toolCall';
  /** What access checks beyond the owner: the named task's scopes, or the tool's. */
  readonly scoped: 'task' | 'tool';
  /** The span's `mcp.method.name` (a `tools/call`'s name adds the tool's). */
  readonly span: string;
  /** Whether the fast lane serves it (when its reader finds the request one the SDK would answer alike). */
  readonly fast: boolean;
}

/** A row whose handler is the same function on both lanes. */
export interface TaskMethodRow extends MethodRow {
  readonly handler: (deps: HandlerDeps) => TaskHandler;
}

/** The 2026-07-28 `tasks/*` methods the project adds to the SDK. */
export const TASK_METHODS_2026 = {
  'tasks/get': { handler: tasksGet, limited: 'task', scoped: 'task', span: 'tasks/get', fast: true },
  'tasks/update': { handler: tasksUpdate, limited: 'task', scoped: 'task', span: 'tasks/update', fast: true },
  'tasks/cancel': { handler: tasksCancel, limited: 'task', scoped: 'task', span: 'tasks/cancel', fast: true },
} as const satisfies Record<string, TaskMethodRow>;

export type TaskMethod2026 = keyof typeof TASK_METHODS_2026;

/**
 * The 2026-07-28 `tools/call` of a task tool: `handlers/start-tool-task.ts` starts the task on
 * both lanes (the SDK lane's `handlers/tools-call.ts` around it, for what is not certainly a task).
 */
export const TOOLS_CALL_2026: MethodRow = { limited: 'toolCall', scoped: 'tool', span: 'tools/call', fast: true };

/** The 2026-07-28 `subscriptions/listen` with task ids: the SDK lane's listen edge serves it (a stream). */
export const LISTEN_2026: MethodRow = { limited: 'task', scoped: 'task', span: 'subscriptions/listen', fast: false };

/** The row of a 2026-07-28 `tasks/*` method, or undefined. */
export function taskMethodOf(method: string): (typeof TASK_METHODS_2026)[TaskMethod2026] | undefined {
  return Object.hasOwn(TASK_METHODS_2026, method) ? TASK_METHODS_2026[method as TaskMethod2026] : undefined;
}
