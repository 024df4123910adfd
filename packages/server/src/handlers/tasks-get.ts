import { toDetailedTask } from '@mcp-tasks/core';
import type { ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import { authorizedRef, type HandlerDeps } from './handler-deps.js';
import { readTaskId } from './read-task-id.js';

/** `tasks/get`: the task as a DetailedTask (result, error or outstanding input inlined); needs the task's scopes. */
export function tasksGet(deps: HandlerDeps) {
  return async (params: unknown, ctx: ServerContext) => {
    if (!declaresTasksExtension(ctx)) throw missingTasksCapability('tasks/get');
    const taskId = readTaskId('tasks/get', params);
    try {
      const { ref, record } = await authorizedRef(deps, taskId, ctx);
      const task = record ? toDetailedTask(record) : await deps.runtime.get(ref);
      return { resultType: 'complete', ...task };
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}
