import { isTerminal, JsonRpcError, ErrorCode } from '@mcp-tasks/core';
import { readTaskId } from '../handlers/read-task-id.js';
import { servesTaskList } from './legacy-capability.js';
import { ownedTask, type LegacyCall, type LegacyTasksDeps } from './legacy-deps.js';
import { invalidParams, rpcError, rpcResult } from './legacy-json-rpc.js';
import { toLegacyTask } from './legacy-task.js';

/** 2025-11-25 `tasks/get`: the caller's task in that revision's `Task` shape. */
export async function legacyTasksGet(deps: LegacyTasksDeps, call: LegacyCall): Promise<Response> {
  const owned = await ownedTask(deps, call, readTaskId('tasks/get', call.params));
  if (owned instanceof Response) return owned;
  return rpcResult(call.id, { ...toLegacyTask(owned.record) });
}

/**
 * 2025-11-25 `tasks/cancel`: the task, now `cancelled`; one already terminal is refused with
 * -32602 naming its status (the spec's MUST), also when it ended while the cancel was on its way.
 */
export async function legacyTasksCancel(deps: LegacyTasksDeps, call: LegacyCall): Promise<Response> {
  const owned = await ownedTask(deps, call, readTaskId('tasks/cancel', call.params));
  if (owned instanceof Response) return owned;
  if (isTerminal(owned.record.status)) return rpcError(call.id, alreadyTerminal(owned.record.status));
  await deps.runtime.cancel(owned.ref);
  const after = await deps.runtime.find(owned.ref);
  if (after.status !== 'cancelled') return rpcError(call.id, alreadyTerminal(after.status));
  deps.cancelled?.(owned.ref);
  return rpcResult(call.id, { ...toLegacyTask(after) });
}

function alreadyTerminal(status: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
}

/**
 * 2025-11-25 `tasks/list`: the caller's own tasks, newest first, a page at a time (`nextCursor`
 * while more follow); expired tasks are absent. Not served (-32601, as for a method that does
 * not exist) where it is not advertised: without authorization, by default.
 */
export async function legacyTasksList(deps: LegacyTasksDeps, call: LegacyCall): Promise<Response> {
  if (!servesTaskList(deps.listTasks, call.authInfo !== undefined)) {
    return rpcError(call.id, new JsonRpcError(ErrorCode.MethodNotFound, 'Method not found: tasks/list is served only to authorized requests'));
  }
  const cursor = call.params['cursor'];
  if (cursor !== undefined && typeof cursor !== 'string') return rpcError(call.id, invalidParams('tasks/list: params.cursor must be a string'));
  const owner = await deps.ownerOf(call.authInfo, call.request);
  const page = await deps.runtime.store.list(owner, cursor === undefined ? {} : { cursor });
  return rpcResult(call.id, { tasks: page.tasks.map(toLegacyTask), ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) });
}
