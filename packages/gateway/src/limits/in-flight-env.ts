import type { InFlightOptions } from '@mcp-tasks/server';

/** `MCP_TASKS_MAX_IN_FLIGHT`: `off`, or a positive integer (requests per owner); empty: the default. */
export function inFlightFromEnv(raw: string | undefined): InFlightOptions | false | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === 'off') return false;
  const maxPerOwner = Number(raw.trim());
  if (!Number.isSafeInteger(maxPerOwner) || maxPerOwner < 1) {
    throw new Error(`MCP_TASKS_MAX_IN_FLIGHT must be "off" or a positive integer, got ${JSON.stringify(raw)}`);
  }
  return { maxPerOwner };
}
