/** The extension identifier of MCP tasks (protocol revision 2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The `_meta` envelope key that carries a request's client capabilities. */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** What a request handler context exposes about the per-request envelope. */
export interface EnvelopeCarrier {
  readonly mcpReq: { readonly envelope?: Partial<Record<string, unknown>> };
}

/**
 * Whether this request declared the tasks extension in its own client capabilities. Only the
 * request counts: an earlier declaration (a session, a discover) does not.
 */
export function declaresTasksExtension(ctx: EnvelopeCarrier): boolean {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_KEY];
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== 'object' || extensions === null) return false;
  return (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== undefined;
}
