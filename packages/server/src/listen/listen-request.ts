import type { RequestId } from '@modelcontextprotocol/server';

/** A `subscriptions/listen` request that asks for `notifications/tasks`. */
export interface TaskListenRequest {
  readonly id: RequestId;
  /** `params.notifications.taskIds` as sent (validated by {@link taskIdsOf}). */
  readonly taskIds: unknown;
  /** `params._meta`: the request's envelope (client capabilities). */
  readonly meta: Record<string, unknown> | undefined;
  /** The same body without `taskIds`: what the SDK is given to serve the standard kinds. */
  readonly withoutTaskIds: Record<string, unknown>;
  /** Whether `notifications` names anything beside `taskIds` (kinds the SDK serves). */
  readonly asksStandardKinds: boolean;
}

/**
 * The task part of a body, when it is a single JSON-RPC `subscriptions/listen` request whose
 * `params.notifications` has a `taskIds` member; otherwise undefined (the SDK serves it unchanged).
 */
export function readTaskListen(body: unknown): TaskListenRequest | undefined {
  if (!isObject(body) || Array.isArray(body) || body['jsonrpc'] !== '2.0' || body['method'] !== 'subscriptions/listen') return undefined;
  const id = body['id'];
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const params = body['params'];
  if (!isObject(params)) return undefined;
  const notifications = params['notifications'];
  if (!isObject(notifications) || !('taskIds' in notifications)) return undefined;
  const { taskIds, ...standard } = notifications;
  const meta = params['_meta'];
  return {
    id,
    taskIds,
    meta: isObject(meta) ? meta : undefined,
    withoutTaskIds: { ...body, params: { ...params, notifications: standard } },
    asksStandardKinds: Object.keys(standard).length > 0,
  };
}

/** The distinct requested ids, or undefined when `taskIds` is not an array of strings. */
export function taskIdsOf(request: TaskListenRequest): string[] | undefined {
  const { taskIds } = request;
  if (!Array.isArray(taskIds) || !taskIds.every((id): id is string => typeof id === 'string')) return undefined;
  return [...new Set(taskIds)];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
