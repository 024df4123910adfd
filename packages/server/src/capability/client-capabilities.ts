import type { ClientCapabilities } from '@mcp-tasks/core';

/** The `_meta` envelope key that carries a request's client capabilities. */
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** What a request handler context exposes about the per-request envelope. */
export interface EnvelopeCarrier {
  readonly mcpReq: { readonly envelope?: Partial<Record<string, unknown>> };
}

/**
 * The client capabilities this request declared in its own envelope (2026-07-28), or
 * `undefined` when it has none: a 2025-11-25 client declares them only in `initialize`, which a
 * stateless node never sees. Input is then not checked against them here; that is the seam
 * where the 2025-11-25 serving decides.
 */
export function clientCapabilitiesOf(ctx: EnvelopeCarrier): ClientCapabilities | undefined {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_KEY];
  if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) return undefined;
  return capabilities as ClientCapabilities;
}
