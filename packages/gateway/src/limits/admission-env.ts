import type { AdmissionOptions } from '@mcp-tasks/server';

/**
 * `MCP_TASKS_ADMISSION`: `off`, or `maxConcurrent[,maxQueue[,maxWaitMs]]` (positive integers: the
 * requests this node serves at once, those that may wait, and how long in ms); empty: the default.
 */
export function admissionFromEnv(raw: string | undefined): AdmissionOptions | false | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === 'off') return false;
  const parts = raw.split(',').map((part) => Number(part.trim()));
  if (parts.length > 3 || parts.some((value) => !Number.isSafeInteger(value) || value < 1)) {
    throw new Error(`MCP_TASKS_ADMISSION must be "off" or "maxConcurrent[,maxQueue[,maxWaitMs]]" with positive integers, got ${JSON.stringify(raw)}`);
  }
  const [maxConcurrent, maxQueue, maxWaitMs] = parts as [number, number | undefined, number | undefined];
  return { maxConcurrent, ...(maxQueue === undefined ? {} : { maxQueue }), ...(maxWaitMs === undefined ? {} : { maxWaitMs }) };
}
