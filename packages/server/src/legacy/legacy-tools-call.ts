import { ProtocolError, ProtocolErrorCode, type JSONRPCRequest } from '@modelcontextprotocol/server';
import type { TaskCallRevision } from '../handlers/tools-call.js';
import { prepareThenExecute } from './prepare-then-execute.js';
import { toLegacyTask } from './legacy-task.js';

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
