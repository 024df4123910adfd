import type { JsonRpcErrorObject, RpcErrorClassifier } from '@mcp-tasks/core';
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';

const CARRIER = Symbol('mcp-tasks.inline-run');

/**
 * What the `tools/call` handler hands an inline run of a task tool through the McpServer's own
 * handler (which passes the context on untouched, and would otherwise decide both points below):
 * the value `prepare` already returned, so `prepare` runs once per request, and a place to leave
 * a JSON-RPC error the tool threw, so the request answers it as a JSON-RPC error, as the task
 * would end `failed` with it, instead of the SDK's `isError` result.
 */
export interface InlineRunCarrier {
  /** Present when `prepare` already ran for this request. */
  readonly prepared?: { readonly value: unknown };
  /** Recognises JSON-RPC errors, as the runtime does for tasks. */
  readonly classify: RpcErrorClassifier;
  /**
   * What the run answers instead of an input-required result, for a revision that cannot ask
   * for input on the request (2025-11-25); absent: the input-required result (MRTR).
   */
  readonly inputRequired?: (result: InputRequiredResult) => CallToolResult;
  /** Set by the inline run: the JSON-RPC error the tool threw. */
  thrown?: JsonRpcErrorObject;
}

/** `ctx` with `carrier` attached (a copy; the SDK copies contexts by spreading, which keeps it). */
export function withInlineRun(ctx: ServerContext, carrier: InlineRunCarrier): ServerContext {
  return { ...ctx, [CARRIER]: carrier } as ServerContext;
}

/** The carrier of this inline run, if the `tools/call` handler attached one. */
export function inlineRunOf(ctx: ServerContext): InlineRunCarrier | undefined {
  return (ctx as ServerContext & { [CARRIER]?: InlineRunCarrier })[CARRIER];
}
