import { ErrorCode, JsonRpcError } from '@mcp-tasks/core';

/**
 * The upstream failed the proxy: unreachable, too slow, or answering something that is not MCP.
 * The message names the mounted upstream by its name (never its URL) and says what happened.
 */
export class UpstreamError extends JsonRpcError {
  /** Whether trying again may help (unreachable, slow); false when the upstream's answer itself rules it out. */
  readonly retryable: boolean;
  /** The upstream refused for its own capacity (HTTP 429, 503): how long it asked to be left alone (`Retry-After`), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(upstream: string, what: string, options: { code?: number; retryable?: boolean; retryAfterMs?: number } = {}) {
    super(options.code ?? ErrorCode.InternalError, `Upstream ${upstream}: ${what}`, { upstream });
    this.name = 'UpstreamError';
    this.retryable = options.retryable ?? true;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** Whether the upstream said it is too busy (a 429 or 503), as opposed to unreachable or broken. */
  get busy(): boolean {
    return this.retryAfterMs !== undefined;
  }
}

/** The upstream answered a JSON-RPC error: relayed with its code, message and data. */
export class UpstreamRpcError extends JsonRpcError {
  constructor(readonly upstream: string, code: number, message: string, data?: unknown) {
    super(code, message, data as never);
    this.name = 'UpstreamRpcError';
  }
}
