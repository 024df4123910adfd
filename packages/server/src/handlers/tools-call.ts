import { QuotaExceededError, RuntimeDrainingError, toTaskView } from '@mcp-tasks/core';
import { ProtocolError, ProtocolErrorCode, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';
import { missingTasksCapability } from '../capability/missing-tasks-capability.js';
import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { assertScopes } from '../auth/task-scopes.js';
import { toProtocolError } from '../errors/to-protocol-error.js';
import type { TaskTool } from '../tool/define-tool.js';
import { isInputRequired } from '../tool/is-input-required.js';
import type { HandlerDeps } from './handler-deps.js';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** Options of {@link taskToolsCall}. */
export interface ToolsCallOptions {
  readonly tools: ReadonlyMap<string, TaskTool>;
  /** The McpServer's own `tools/call` handler: ordinary tools, and task tools run inline. */
  readonly inline: Handler;
  /** Largest serialised `arguments` a task accepts. */
  readonly maxArgumentBytes: number;
}

/**
 * `tools/call` for a server with task tools. A task tool called by a request that declares the
 * extension becomes a task: arguments are checked and `prepare` runs first (it may answer the
 * request input-required), then the task is committed and the CreateTaskResult returned at once.
 * Without the extension an optional tool runs inline and a required one is refused with -32021.
 * Over the owner's quota an optional tool runs inline and a required one is refused (-32600).
 * Everything else goes to the McpServer's own handler.
 */
export function taskToolsCall(deps: HandlerDeps, options: ToolsCallOptions): Handler {
  return async (request, ctx) => {
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const tool = typeof params.name === 'string' ? options.tools.get(params.name) : undefined;
    if (!tool || tool.task === 'forbidden') return options.inline(request, ctx);
    if (!declaresTasksExtension(ctx)) {
      if (tool.task === 'required') throw missingTasksCapability(`tool ${tool.name}`);
      return options.inline(request, ctx);
    }

    // Served through createMcpHandler, the SDK already answered a token without the tool's scopes
    // with 403 (the tool's scopeChallenge); this is the fallback for other hosts.
    assertScopes(tool.scopes, ctx.http?.authInfo);
    const args = parseArguments(tool, params.arguments, options.maxArgumentBytes);
    const owner = await deps.ownerOf(ctx);
    const inputResponses = ctx.mcpReq.inputResponses ?? {};
    let prepared: unknown;
    if (tool.prepare) {
      const outcome = await tool.prepare(args, { owner, asTask: true, inputResponses, mcp: ctx });
      if (isInputRequired(outcome)) return outcome;
      prepared = outcome;
    }
    try {
      const record = await deps.runtime.start({
        owner,
        tool: tool.name,
        scopes: tool.scopes,
        args,
        execute: async (a, taskCtx) => (await tool.execute(a, { ...taskCtx, prepared, mode: 'task' })) as never,
      });
      return { resultType: 'task', ...toTaskView(record) };
    } catch (error) {
      const noTaskNow = error instanceof QuotaExceededError || error instanceof RuntimeDrainingError;
      if (noTaskNow && tool.task === 'optional') return options.inline(request, ctx);
      throw toProtocolError(error);
    }
  };
}

function parseArguments(tool: TaskTool, raw: unknown, maxBytes: number): unknown {
  const value = raw ?? {};
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > maxBytes) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: arguments are ${bytes} bytes; the limit is ${maxBytes}`);
  }
  const parsed = tool.input.safeParse(value);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
      .join('; ');
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: ${detail}`);
  }
  return parsed.data;
}
