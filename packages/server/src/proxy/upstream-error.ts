import { ErrorCode, JsonRpcError } from '@mcp-tasks/core';

/**
 * The upstream failed the proxy: unreachable, too slow, or answering something that is not MCP.
 * The message names the mounted upstream by its name (never its URL) and says what happened.
 */
export class UpstreamError extends JsonRpcError {
  /** Whether trying again may help (unreachable, slow); false when the upstream's answer itself rules it out. */
  readonly retryable: boolean;

  constructor(upstream: string, what: string, options: { code?: number; retryable?: boolean } = {}) {
    super(options.code ?? ErrorCode.InternalError, `Upstream ${upstream}: ${what}`, { upstream });
    this.name = 'UpstreamError';
    this.retryable = options.retryable ?? true;
  }
}

/** The upstream answered a JSON-RPC error: relayed with its code, message and data. */
export class UpstreamRpcError extends JsonRpcError {
  constructor(readonly upstream: string, code: number, message: string, data?: unknown) {
    super(code, message, data as never);
    this.name = 'UpstreamRpcError';
  }
}
