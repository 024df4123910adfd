import type { ElicitParams, SampleParams } from '@mcp-tasks/core';
import { defineTool, type AnyTaskTool, type ToolContext } from '@mcp-tasks/server';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { UpstreamAsker } from './call-router.js';

/** What one call of a plain tool sends with it, and where its progress and questions go. */
export interface PlainCall {
  readonly signal: AbortSignal;
  readonly asker: UpstreamAsker;
  onProgress(progress: number, total: number | undefined, message: string | undefined): void;
}

/** Where a plain tool runs: a stdio process (`StdioUpstream`) or a 2025-11-25 HTTP server (`HttpPlainUpstream`). */
export interface PlainUpstream {
  call(tool: string, args: Record<string, unknown>, call: PlainCall): Promise<CallToolResult>;
}

/** How one upstream's plain tools are served. */
export interface PlainToolOptions {
  /** What goes before each tool's name. */
  readonly prefix: string;
  /** The scopes a caller needs (auth on). */
  readonly scopes?: readonly string[];
  /** Whether another node runs a lost task again (`retry: idempotent`), by upstream tool name. */
  readonly idempotent: (tool: string) => boolean;
}

/**
 * An upstream's plain tool as an optional task tool of the gateway: a caller that declares the
 * extension gets a task, whose run calls the tool upstream from the node that runs it. Upstream
 * progress becomes the task's `statusMessage`; an upstream elicitation, sampling or roots request
 * becomes the task's `input_required` (answered by `tasks/update` on any node); the task's cancel
 * (on any node) aborts the call, which sends `notifications/cancelled` upstream.
 */
export function plainTaskTool(upstream: PlainUpstream, tool: Tool, options: PlainToolOptions): AnyTaskTool {
  const resumable = options.idempotent(tool.name);
  return defineTool({
    name: `${options.prefix}${tool.name}`,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    task: 'optional',
    input: inputOf(tool),
    ...(options.scopes && options.scopes.length > 0 ? { scopes: options.scopes } : {}),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as never }),
    resumable,
    execute: async (args, ctx) => {
      let asked = 0;
      let lastProgress = Promise.resolve();
      const result = await upstream.call(tool.name, args as Record<string, unknown>, {
        signal: ctx.signal,
        onProgress: (progress, total, message) => {
          // In order, and never failing the call: a status message is a hint.
          lastProgress = lastProgress.then(() => ctx.progress(progress, total, message)).catch(() => undefined);
        },
        asker: {
          // Keys in the order the upstream asks: a run started again asks again in that order and gets the first answers.
          ask: (kind, params) => {
            asked += 1;
            return ask(ctx, kind, `${kind}-${asked}`, params);
          },
        },
      });
      await lastProgress;
      return result as never;
    },
  });
}

function ask(ctx: ToolContext<undefined>, kind: 'elicit' | 'sample' | 'roots', key: string, params: unknown): Promise<unknown> {
  if (kind === 'elicit') return ctx.elicit(key, params as ElicitParams);
  if (kind === 'sample') return ctx.sample(key, params as SampleParams);
  return ctx.roots(key);
}

/** The upstream's input schema as the gateway's (listed as the upstream lists it, checked before any task). */
function inputOf(tool: Tool): z.ZodType {
  try {
    return z.fromJSONSchema(tool.inputSchema as never);
  } catch {
    return z.looseObject({});
  }
}
