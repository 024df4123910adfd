import type { ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import type { HandlerDeps } from './handler-deps.js';
import { readTaskId } from './read-task-id.js';

/** `tasks/get`: the task as a DetailedTask (result, error or outstanding input inlined). */
export function tasksGet(deps: HandlerDeps) {
  return async (params: unknown, ctx: ServerContext) => {
    if (!declaresTasksExtension(ctx)) throw missingTasksCapability('tasks/get');
    const taskId = readTaskId('tasks/get', params);
    try {
      const task = await deps.runtime.get({ taskId, owner: await deps.ownerOf(ctx) });
      return { resultType: 'complete', ...task };
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}
