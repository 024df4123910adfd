import { ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult, type JSONRPCRequest } from '@modelcontextprotocol/server';
import type { TaskCallRevision } from '../handlers/tools-call.js';
import { prepareThenExecute } from '../tool/prepare-then-execute.js';
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
  inlineInputRequired: (tool, result, noTaskNow) => inlineInputRefused(tool, result, noTaskNow),
  // Declared only in `initialize`, never seen again by a stateless node: a task is allowed what
  // that revision allows (see docs/server.md), which an upstream must be told to ask for it.
  undeclaredCapabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
};

/**
 * An inline run that asks for input, for a 2025-11-25 client: that revision would ask it with a
 * server-to-client request on the `tools/call` stream, whose answer is a POST of its own that may
 * land on any node, and an inline run has no task row to record it in (see docs/server.md). The
 * tool's result says so and what to do instead, as that revision's tools report failures
 * (`isError`), rather than the SDK's generic refusal.
 */
function inlineInputRefused(tool: { readonly name: string }, result: InputRequiredResult, noTaskNow: boolean): CallToolResult {
  const asked = Object.entries(result.inputRequests ?? {})
    .map(([key, request]) => `${key} (${String((request as { method?: unknown }).method)})`)
    .join(', ');
  return {
    content: [{ type: 'text', text: `Tool ${tool.name} asks for input${asked ? ` (${asked})` : ''}, which a 2025-11-25 client can answer only in a task: ${noTaskNow ? 'no task could start now (quota, or the node is draining); try again later' : 'call it with params.task'}` }],
    isError: true,
  };
}

function taskParamsOf(request: JSONRPCRequest): Record<string, unknown> | undefined {
  const task = (request.params as { task?: unknown } | undefined)?.task;
  return typeof task === 'object' && task !== null && !Array.isArray(task) ? (task as Record<string, unknown>) : undefined;
}
