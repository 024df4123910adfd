import type { RefusalHoldOptions } from '@mcp-tasks/server';

/** `MCP_TASKS_REFUSAL_HOLD_MS`: `off`, or a positive number (the average hold of a refusal, in ms); empty: the default. */
export function refusalHoldFromEnv(raw: string | undefined): RefusalHoldOptions | false | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === 'off') return false;
  const holdMs = Number(raw.trim());
  if (!(holdMs > 0) || !Number.isFinite(holdMs)) {
    throw new Error(`MCP_TASKS_REFUSAL_HOLD_MS must be "off" or a positive number of milliseconds, got ${JSON.stringify(raw)}`);
  }
  return { holdMs };
}
