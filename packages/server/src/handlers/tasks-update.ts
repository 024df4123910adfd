import { validateInputResponses } from '@mcp-tasks/core';
import type { ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import { authorizedRef, type HandlerDeps } from './handler-deps.js';
import { readTaskId } from './read-task-id.js';

/**
 * `tasks/update`: records the answers in `inputResponses` and acks with an empty result. Unknown
 * and already answered keys are ignored whatever they carry; a partial answer keeps the task
 * `input_required`. A value under an outstanding key that is not the bare result object of its
 * request is refused with -32602 naming the key, and nothing is stored. Needs the task's scopes.
 */
export function tasksUpdate(deps: HandlerDeps) {
  return async (params: unknown, ctx: ServerContext) => {
    if (!declaresTasksExtension(ctx)) throw missingTasksCapability('tasks/update');
    const taskId = readTaskId('tasks/update', params);
    // What the SDK (and the direct path, alike) could not take as an answer, by key.
    const malformed = ctx.mcpReq.droppedInputResponseKeys ?? [];
    // Copied by own entries: the SDK builds its view by assignment, so a client's key `__proto__`
    // replaced the view's prototype and the whole update was refused as "not a JSON object".
    const responses = Object.fromEntries(Object.entries(ctx.mcpReq.inputResponses ?? {}));
    try {
      validateInputResponses(responses);
      await deps.runtime.update((await authorizedRef(deps, taskId, ctx)).ref, responses, malformed);
      return { resultType: 'complete' };
    } catch (error) {
      throw toProtocolError(error);
    }
  };
}
