import { ErrorCode, JsonRpcError } from '@mcp-tasks/core';

/**
 * The upstream failed the proxy: unreachable, too slow, or answering something that is not MCP.
 * The message names the mounted upstream by its name (never its URL) and says what happened.
 */
export class UpstreamError extends JsonRpcError {
  constructor(upstream: string, what: string, code: number = ErrorCode.InternalError) {
    super(code, `Upstream ${upstream}: ${what}`, { upstream });
    this.name = 'UpstreamError';
  }
}

/** The upstream answered a JSON-RPC error: relayed with its code, message and data. */
export class UpstreamRpcError extends JsonRpcError {
  constructor(readonly upstream: string, code: number, message: string, data?: unknown) {
    super(code, message, data as never);
    this.name = 'UpstreamRpcError';
  }
}
