import { isWellFormedTaskId, type TaskOwner, type TaskStore } from '@mcp-tasks/core';
import type { AuthInfo, ScopeChallenge, ScopeChallengeHandler } from '@modelcontextprotocol/server';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import type { TaskReadMemo } from './task-read-memo.js';
import { lacksScopes } from './task-scopes.js';

/** The `tasks/*` methods that act on one task and need its scopes. */
export const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen']);

/** What {@link taskScopeChallenge} needs. */
export interface TaskScopeChallengeDeps {
  readonly store: Pick<TaskStore, 'read'>;
  /** The owner of a caller with this token, as the handlers resolve it. */
  ownerFor(authInfo: AuthInfo): Promise<TaskOwner>;
  /** Where the task read here is left for the request's handler, which then does not read it again. */
  readonly memo?: TaskReadMemo;
}

/**
 * A scope-challenge handler for `tasks/get`, `tasks/update` and `tasks/cancel`: the SDK runs it
 * before dispatch (as it runs a tool's `scopeChallenge` for `tools/call`) and answers a challenge
 * with HTTP 403 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`.
 *
 * The lookup is owner-scoped and comes first: a task of another owner (or an unknown id) yields
 * no challenge, so the handler answers it with the not-found error and nobody learns from the
 * challenge that a foreign task exists or which scopes it needs. Requests without a token, or
 * that do not declare the extension, are left to the handler as well.
 */
export function taskScopeChallenge(deps: TaskScopeChallengeDeps): ScopeChallengeHandler {
  return async ({ request, authInfo }): Promise<ScopeChallenge | undefined> => {
    if (authInfo === undefined || !TASK_METHODS.has(request.method)) return undefined;
    const params = request.params as { taskId?: unknown; _meta?: Record<string, unknown> } | undefined;
    if (!declaresTasksExtension({ mcpReq: { envelope: params?._meta } })) return undefined;
    const taskId = params?.taskId;
    if (typeof taskId !== 'string' || !isWellFormedTaskId(taskId)) return undefined;
    const ref = { taskId, owner: await deps.ownerFor(authInfo) };
    const task = await deps.store.read(ref);
    if (task && lacksScopes(task.scopes, authInfo)) {
      return {
        scopes: task.scopes as [string, ...string[]],
        errorDescription: `This task needs scope ${task.scopes.join(' ')}`,
      };
    }
    // Only a request that goes on to its handler leaves its read there.
    deps.memo?.remember(ref, task);
    return undefined;
  };
}
