import { clientCapabilitiesOf, type EnvelopeCarrier } from './client-capabilities.js';

/** The extension identifier of MCP tasks (protocol revision 2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether this request declared the tasks extension in its own client capabilities. Only the
 * request counts: an earlier declaration (a session, a discover) does not.
 */
export function declaresTasksExtension(ctx: EnvelopeCarrier): boolean {
  const extensions = clientCapabilitiesOf(ctx)?.['extensions'];
  if (typeof extensions !== 'object' || extensions === null) return false;
  return (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== undefined;
}
