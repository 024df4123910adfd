import { ErrorCode, JsonRpcError, type InputRequest, type TaskContext, type TaskExecute, type TaskOwner } from '@mcp-tasks/core';
import { ProtocolError, ProtocolErrorCode, type JSONRPCRequest } from '@modelcontextprotocol/server';
import type { TaskCallRevision } from '../handlers/tools-call.js';
import type { TaskTool } from '../tool/define-tool.js';
import { isInputRequired } from '../tool/is-input-required.js';
import { validateToolOutput } from '../tool/validate-output.js';
import { toLegacyTask } from './legacy-task.js';

/** Rounds of input one `prepare` may ask for inside its task before the task fails. */
const MAX_PREPARE_ROUNDS = 16;

/**
 * Task calls as 2025-11-25 makes them: `params.task` asks for a task (its `ttl` honoured up to
 * the server's), the answer is `{ task }`, a required tool called without it and a forbidden one
 * called with it get -32601 (the spec's "MUST return -32601 … if a client does not attempt to"),
 * and `prepare` runs at the start of the task (that revision has no multi-round-trip input on
 * the original request), where its input requests reach the client as any task input does.
 */
export const LEGACY_REVISION: TaskCallRevision = {
  wantsTask: (request) => taskParamsOf(request) !== undefined,
  taskRequired: (tool) => new ProtocolError(ProtocolErrorCode.MethodNotFound, `Tool ${tool.name} requires task-augmented execution: call it with params.task`),
  taskForbidden: (tool) => new ProtocolError(ProtocolErrorCode.MethodNotFound, `Tool ${tool.name} does not run as a task: call it without params.task`),
  ttlMs: (request) => {
    const ttl = taskParamsOf(request)?.['ttl'];
    if (ttl === undefined || ttl === null) return undefined;
    if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl <= 0) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'params.task.ttl must be a positive integer (milliseconds)');
    }
    return ttl;
  },
  created: (record) => ({ task: toLegacyTask(record) }),
  executeWithPrepare: (tool, owner, mcp) => prepareThenExecute(tool, owner, mcp),
};

function taskParamsOf(request: JSONRPCRequest): Record<string, unknown> | undefined {
  const task = (request.params as { task?: unknown } | undefined)?.task;
  return typeof task === 'object' && task !== null && !Array.isArray(task) ? (task as Record<string, unknown>) : undefined;
}

/**
 * The task body of a tool with `prepare`, for a client that cannot answer input on the original
 * request: `prepare` runs first inside the task, and each input it asks for is asked through the
 * task (same keys, so its keys share the task's key space with `execute`'s and the first answer
 * of a key is replayed); once it returns a value, `execute` runs with it. `mcp` is the creating
 * request's context (its response is already sent: read its auth info, not its stream).
 */
function prepareThenExecute(tool: TaskTool, owner: TaskOwner, mcp: Parameters<NonNullable<TaskTool['prepare']>>[1]['mcp']): TaskExecute<unknown> {
  return async (args, taskCtx) => {
    const answers: Record<string, unknown> = {};
    for (let round = 0; round < MAX_PREPARE_ROUNDS; round += 1) {
      const outcome = await tool.prepare!(args, { owner, asTask: true, inputResponses: { ...answers }, mcp });
      if (!isInputRequired(outcome)) {
        return validateToolOutput(tool, await tool.execute(args, { ...taskCtx, prepared: outcome, mode: 'task' })) as never;
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
