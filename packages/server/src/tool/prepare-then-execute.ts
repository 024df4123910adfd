import { ErrorCode, extendTaskContext, JsonRpcError, type InputRequest, type TaskContext, type TaskExecute, type TaskOwner } from '@mcp-tasks/core';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { TaskTool } from './define-tool.js';
import { isInputRequired } from './is-input-required.js';
import { validateToolOutput } from './validate-output.js';

/** Rounds of input one `prepare` may ask for inside its task before the task fails. */
const MAX_PREPARE_ROUNDS = 16;

/**
 * The task body of a tool with `prepare`, for a client that cannot answer input on the original
 * request: `prepare` runs first inside the task, and each input it asks for is asked through the
 * task (same keys, so its keys share the task's key space with `execute`'s and the first answer
 * of a key is replayed); once it returns a value, `execute` runs with it. `mcp` is the creating
 * request's context (its response is already sent: read its auth info, not its stream), or
 * `undefined` on a node that claimed the task and never saw that request.
 */
export function prepareThenExecute(tool: TaskTool, owner: TaskOwner, mcp: ServerContext | undefined): TaskExecute<unknown> {
  return async (args, taskCtx) => {
    const answers: Record<string, unknown> = {};
    for (let round = 0; round < MAX_PREPARE_ROUNDS; round += 1) {
      const outcome = await tool.prepare!(args, { owner, asTask: true, inputResponses: { ...answers }, mcp });
      if (!isInputRequired(outcome)) {
        return validateToolOutput(tool, await tool.execute(args, extendTaskContext(taskCtx, { prepared: outcome, mode: 'task' as const }))) as never;
      }
      const requests = Object.entries((outcome as { inputRequests?: Record<string, InputRequest> }).inputRequests ?? {}).filter(([key]) => !(key in answers));
      if (requests.length === 0) break;
      for (const [key, request] of requests) answers[key] = await ask(taskCtx, key, request);
    }
    throw new JsonRpcError(ErrorCode.InternalError, `prepare of tool ${tool.name} kept asking for input without returning`);
  };
}

async function ask(ctx: TaskContext, key: string, request: InputRequest): Promise<unknown> {
  switch (request.method) {
    case 'elicitation/create':
      return ctx.elicit(key, request.params as never);
    case 'sampling/createMessage':
      return ctx.sample(key, request.params as never);
    case 'roots/list':
      return ctx.roots(key);
    default:
      throw new JsonRpcError(ErrorCode.InvalidParams, `prepare asked for input by an unknown method: ${String((request as { method?: unknown }).method)}`);
  }
}
