import type { RateLimitOptions } from '@mcp-tasks/server';

/** `MCP_TASKS_RATE_LIMIT`: `off`, or `perSecond[,burst]` (positive numbers); empty: the default. */
export function rateLimitFromEnv(raw: string | undefined): RateLimitOptions | false | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === 'off') return false;
  const parts = raw.split(',').map((part) => Number(part.trim()));
  if (parts.length > 2 || parts.some((value) => !Number.isFinite(value) || value <= 0)) {
    throw new Error(`MCP_TASKS_RATE_LIMIT must be "off" or "perSecond[,burst]" with positive numbers, got ${JSON.stringify(raw)}`);
  }
  const [requestsPerSecond, burst] = parts as [number, number | undefined];
  return burst === undefined ? { requestsPerSecond } : { requestsPerSecond, burst };
}
