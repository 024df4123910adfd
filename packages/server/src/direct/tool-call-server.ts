import { QuotaExceededError, RuntimeDrainingError, type TaskRuntime } from '@mcp-tasks/core';
import type { Implementation, Result } from '@modelcontextprotocol/server';
import { lacksScopes } from '../access/task-scopes.js';
import { TOOLS_CALL_2026 } from '../front/method-table.js';
import { requestContextOf } from '../front/request-context.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import { startToolTask } from '../handlers/start-tool-task.js';
import { checkArguments } from '../handlers/tool-arguments.js';
import { EXTENSION_REVISION } from '../handlers/tools-call.js';
import type { Admission } from '../limits/admission.js';
import type { McpRequestTracer } from '../telemetry/mcp-request-tracer.js';
import type { TaskTool } from '../tool/define-tool.js';
import { taskExecute } from '../tool/task-execute.js';
import { bodyBytesOf } from '../exchange/direct-exchange.js';
import { errorResponse, resultResponse } from './encode-task-response.js';
import { readFastToolCall } from './fast-tool-call.js';
import type { FastMethodServer } from '../front/fast-lane.js';

/** What {@link toolCallServer} needs: the same parts the SDK path's `tools/call` is built from. */
export interface ToolCallServerOptions {
  readonly runtime: TaskRuntime;
  /** Stamped on every result's `_meta`, as the SDK stamps its McpServer's identity. */
  readonly serverInfo: Implementation;
  readonly tracer: McpRequestTracer;
  /** The handler's own task tools (not proxied ones). */
  readonly tools: ReadonlyMap<string, TaskTool>;
  /** Largest serialised `arguments` a task accepts. */
  readonly maxArgumentBytes: number;
  /** Admission: the limits of task tool calls (and the refusal hold), the same ones the SDK lane's calls meet. */
  readonly admission: Admission;
}

/** Returned by the traced start when the runtime takes no task now: the SDK path answers instead. */
const NO_TASK_NOW = Symbol('no task now');

/**
 * Serves the 2026-07-28 `tools/call` that becomes a task without a per-request McpServer: the
 * same argument check, owner, task row, span (and `execute_tool` child) and CreateTaskResult
 * bytes as the SDK path's `tools/call`. Only a call the SDK path would certainly answer with a
 * task is served here ({@link readFastToolCall}); one with arguments its schema refuses, a
 * scoped tool without a token that grants every scope (the SDK's scope challenge answers it),
 * and a call the runtime takes no task for now (over quota, draining: an optional tool then runs
 * inline, a required one is refused) return `undefined`, and the caller hands them to the SDK path.
 * Over quota that costs one more span (this path's, ended without a task) and one more refusal in
 * the quota metrics, since only the store's insert knows the owner is over it.
 * A call meets the limits of task tool calls ({@link RequestLimits.toolRuns}) on both paths.
 */
export function toolCallServer(options: ToolCallServerOptions): FastMethodServer {
  const { runtime, serverInfo, tracer, tools, maxArgumentBytes, admission } = options;
  return async (request, classified, ownerOnce) => {
    const call = readFastToolCall(request, tools);
    if (!call) return undefined;
    const { tool } = call;
    const authInfo = request.authInfo;
    if (tool.scopes.length > 0 && (authInfo === undefined || lacksScopes(tool.scopes, authInfo))) return undefined;
    // Draining refuses every start: no span of this path's for a call the SDK path then answers.
    if (runtime.draining) return undefined;
    const checked = checkArguments(tool, call.arguments, maxArgumentBytes);
    if (!checked.ok) return undefined;
    const owner = await ownerOnce();
    if (owner === undefined) return undefined;
    const admitted = await admission.admitRequest(classified, TOOLS_CALL_2026.limited, owner, authInfo !== undefined, bodyBytesOf(request));
    if (admitted.refused) return admitted.refused;
    const { leave } = admitted;
    const ctx = requestContextOf(call, authInfo);
    try {
      const result = await tracer.trace({ method: TOOLS_CALL_2026.span, toolName: tool.name }, ctx, async (): Promise<Result | typeof NO_TASK_NOW> => {
        try {
          const record = await startToolTask(runtime, tool, ctx, { owner, args: checked.value, execute: taskExecute(tool, undefined), authenticated: authInfo !== undefined });
          return EXTENSION_REVISION.created(record);
        } catch (error) {
          if (error instanceof QuotaExceededError || error instanceof RuntimeDrainingError) return NO_TASK_NOW;
          throw toProtocolError(error);
        }
      });
      if (result === NO_TASK_NOW) return undefined;
      return resultResponse(call.id, result as Record<string, unknown>, serverInfo);
    } catch (error) {
      return errorResponse(call.id, error);
    } finally {
      leave();
    }
  };
}
