import { TaskNotFoundError, type TaskOwner, type TaskRef, type TaskSnapshot, type TaskRuntime } from '@mcp-tasks/core';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { TaskReadMemo } from '../access/task-read-memo.js';
import { assertScopes } from '../access/task-scopes.js';

/** What the `tasks/*` and `tools/call` handlers share: the runtime and how to tell the owner. */
export interface HandlerDeps {
  readonly runtime: TaskRuntime;
  /** The owner of the request's caller. */
  ownerOf(ctx: ServerContext): Promise<TaskOwner>;
  /** What this request's scope challenge already read (see {@link TaskReadMemo}). */
  readonly memo?: TaskReadMemo;
}

/**
 * The caller's reference to `taskId` once the task is known to be theirs and their token has
 * the task's scopes. The owner-scoped lookup comes first, so a foreign or unknown id is
 * `TaskNotFoundError` whatever the token's scopes. Without a token there are no scopes to check,
 * and the lookup is left to the runtime call that follows (`record` is then undefined). What the
 * request's scope challenge read is used, not read again.
 */
export async function authorizedRef(deps: HandlerDeps, taskId: string, ctx: ServerContext): Promise<{ ref: TaskRef; record?: TaskSnapshot }> {
  const ref: TaskRef = { taskId, owner: await deps.ownerOf(ctx) };
  const authInfo = ctx.http?.authInfo;
  if (authInfo === undefined) return { ref };
  const read = deps.memo?.take(ref);
  if (read === null) throw new TaskNotFoundError();
  const record = read ?? (await deps.runtime.read(ref));
  assertScopes(record.scopes, authInfo);
  return { ref, record };
}
