import type { ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import { authorizedRef, type HandlerDeps } from './handler-deps.js';
import { readTaskId } from './read-task-id.js';

/** `tasks/cancel`: an empty ack; a finished task stays as it is and gets the same ack; needs the task's scopes. */
export function tasksCancel(deps: HandlerDeps) {
  return async (params: unknown, ctx: ServerContext) => {
    if (!declaresTasksExtension(ctx)) throw missingTasksCapability('tasks/cancel');
    const taskId = readTaskId('tasks/cancel', params);
    try {
      await deps.runtime.cancel((await authorizedRef(deps, taskId, ctx)).ref);
      return { resultType: 'complete' };
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}
