import { QuotaExceededError, RuntimeDrainingError, toTaskView, type JsonObject, type RpcErrorClassifier, type TaskExecute, type TaskOwner, type TaskRecord } from '@mcp-tasks/core';
import { ProtocolError, type CallToolResult, type InputRequiredResult, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { assertScopes } from '../access/task-scopes.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import type { TaskTool } from '../tool/define-tool.js';
import { withInlineRun, type InlineRunCarrier } from '../tool/inline-run-carrier.js';
import { isInputRequired } from '../tool/is-input-required.js';
import { carryPrepared, PREPARE_IN_TASK } from '../tool/run-carry.js';
import { taskExecute } from '../tool/task-execute.js';
import type { HandlerDeps } from './handler-deps.js';
import { startToolTask } from './start-tool-task.js';
import { parseArguments } from './tool-arguments.js';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * How one protocol revision asks for a task and is answered with one. The default is
 * 2026-07-28's: a request that declares the extension gets a task; 2025-11-25 serving passes its
 * own (`legacy/legacy-tools-call.ts`).
 */
export interface TaskCallRevision {
  /** Whether this request asks for a task. */
  wantsTask(request: JSONRPCRequest, ctx: ServerContext): boolean;
  /** The error for a required tool called without asking for a task. */
  taskRequired(tool: { readonly name: string }): Error;
  /** The error for asking a task of a `forbidden` tool; `undefined` runs it inline. */
  taskForbidden?(tool: TaskTool): Error;
  /** The time to live the request asks for (checked), if any. */
  ttlMs?(request: JSONRPCRequest): number | undefined;
  /** The answer that hands the client its task. */
  created(record: TaskRecord): Result;
  /**
   * How the task runs the tool, when `prepare` cannot run in the request (a revision without
   * multi-round-trip input): then the request does not run it, and this body does.
   */
  executeWithPrepare?(tool: TaskTool, owner: TaskOwner, ctx: ServerContext): TaskExecute<unknown>;
  /**
   * The answer for an inline run that asks for input, when this revision cannot ask for it on
   * the request; `undefined` answers the input-required result as it is (MRTR).
   */
  inlineInputRequired?(tool: TaskTool, result: InputRequiredResult, noTaskNow: boolean): CallToolResult;
  /**
   * What a request of this revision that declares no client capabilities may be asked for, as
   * far as an upstream needs telling (a proxied call); `undefined`: nothing.
   */
  readonly undeclaredCapabilities?: JsonObject;
}

export const EXTENSION_REVISION: TaskCallRevision = {
  wantsTask: (_request, ctx) => declaresTasksExtension(ctx),
  taskRequired: (tool) => missingTasksCapability(`tool ${tool.name}`),
  created: (record) => ({ resultType: 'task', ...toTaskView(record) }),
};

/** Options of {@link taskToolsCall}. */
export interface ToolsCallOptions {
  readonly tools: ReadonlyMap<string, TaskTool>;
  /** The McpServer's own `tools/call` handler: ordinary tools, and task tools run inline. */
  readonly inline: Handler;
  /** Largest serialised `arguments` a task accepts. */
  readonly maxArgumentBytes: number;
  /** Recognises JSON-RPC errors thrown by tools, as the runtime's classifier does for tasks. */
  readonly classifyError: RpcErrorClassifier;
  /** Which revision's task calls these are. Default: the 2026-07-28 extension's. */
  readonly revision?: TaskCallRevision;
}

/**
 * `tools/call` for a server with task tools. A task tool called by a request that declares the
 * extension becomes a task: arguments are checked and `prepare` runs first (it may answer the
 * request input-required), then the task is committed and the CreateTaskResult returned at once.
 * Without the extension an optional tool runs inline and a required one is refused with -32021.
 * Over the owner's quota an optional tool runs inline and a required one is refused (-32600).
 * A task tool's inline run answers bad arguments and thrown JSON-RPC errors as JSON-RPC errors,
 * as its task would; `prepare` runs once per request either way. Everything else goes to the
 * McpServer's own handler.
 */
export function taskToolsCall(deps: HandlerDeps, options: ToolsCallOptions): Handler {
  const revision = options.revision ?? EXTENSION_REVISION;
  // `noTaskNow`: the request asked for a task, and none could start (quota, draining).
  const inline = async (request: JSONRPCRequest, ctx: ServerContext, tool: TaskTool, noTaskNow = false, prepared?: { value: unknown }): Promise<Result> => {
    const refuse = revision.inlineInputRequired;
    const carrier: InlineRunCarrier = {
      classify: options.classifyError,
      ...(prepared ? { prepared } : {}),
      ...(refuse ? { inputRequired: (result: InputRequiredResult) => refuse(tool, result, noTaskNow) } : {}),
    };
    const result = await options.inline(request, withInlineRun(ctx, carrier));
    if (carrier.thrown) throw new ProtocolError(carrier.thrown.code, carrier.thrown.message, carrier.thrown['data']);
    return result;
  };

  return async (request, ctx) => {
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const tool = typeof params.name === 'string' ? options.tools.get(params.name) : undefined;
    if (!tool) return options.inline(request, ctx);
    const wantsTask = revision.wantsTask(request, ctx);
    if (tool.task === 'required' && !wantsTask) throw revision.taskRequired(tool);
    const forbidden = tool.task === 'forbidden' && wantsTask ? revision.taskForbidden?.(tool) : undefined;
    if (forbidden) throw forbidden;
    const args = parseArguments(tool, params.arguments, options.maxArgumentBytes);
    if (tool.task === 'forbidden' || !wantsTask) return inline(request, ctx, tool);
    const ttlMs = revision.ttlMs?.(request);

    // Served through createMcpHandler, the SDK already answered a token without the tool's scopes
    // with 403 (the tool's scopeChallenge); this is the fallback for other hosts.
    assertScopes(tool.scopes, ctx.http?.authInfo);
    const owner = await deps.ownerOf(ctx);
    const inputResponses = ctx.mcpReq.inputResponses ?? {};
    let prepared: unknown;
    const prepareInTask = tool.prepare !== undefined && revision.executeWithPrepare !== undefined;
    if (tool.prepare && !prepareInTask) {
      const outcome = await tool.prepare(args, { owner, asTask: true, inputResponses, mcp: ctx });
      if (isInputRequired(outcome)) return outcome;
      prepared = outcome;
    }
    try {
      // What a node that claims the task needs to run it as this one would.
      const carried = prepareInTask ? PREPARE_IN_TASK : tool.prepare ? carryPrepared(prepared) : undefined;
      const record = await startToolTask(deps.runtime, tool, ctx, {
        owner,
        args,
        carried,
        ttlMs,
        authenticated: ctx.http?.authInfo !== undefined,
        execute: prepareInTask ? revision.executeWithPrepare!(tool, owner, ctx) : taskExecute(tool, prepared),
      });
      return revision.created(record);
    } catch (error) {
      const noTaskNow = error instanceof QuotaExceededError || error instanceof RuntimeDrainingError;
      // `prepare` already ran for this request (with asTask=true): the inline run reuses its value.
      if (noTaskNow && tool.task === 'optional') return inline(request, ctx, tool, true, tool.prepare && !prepareInTask ? { value: prepared } : undefined);
      throw toProtocolError(error);
    }
  };
}
