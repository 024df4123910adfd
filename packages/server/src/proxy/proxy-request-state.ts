import { ErrorCode, JsonRpcError } from '@mcp-tasks/core';

const PREFIX = 'mcp-tasks.proxy.v1:';

/**
 * The `requestState` the proxy hands the client with a relayed `input_required`: the upstream's
 * own state, carried as it came, so that any proxy node can forward the retry (nothing is kept
 * between rounds). The upstream validates its own state; the proxy only unwraps it.
 */
export function wrapUpstreamState(upstream: string, state: string | undefined): string {
  return PREFIX + Buffer.from(JSON.stringify({ u: upstream, s: state ?? null }), 'utf8').toString('base64url');
}

/** The upstream's state from a retry's `requestState`; `undefined` for a first round. */
export function unwrapUpstreamState(upstream: string, requestState: unknown): string | undefined {
  if (requestState === undefined || requestState === null) return undefined;
  if (typeof requestState !== 'string' || !requestState.startsWith(PREFIX)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(requestState.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid();
  const { u, s } = parsed as { u?: unknown; s?: unknown };
  if (u !== upstream || !(s === null || typeof s === 'string')) throw invalid();
  return s ?? undefined;
}

function invalid(): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, 'Invalid requestState: it was not minted by this proxy for this tool');
}
