import { ErrorCode } from '@mcp-tasks/core';
import type { UpstreamCapacity } from './upstream-share.js';

/**
 * The upstream's quota for the gateway's credential, read from its refusal of a task (-32600):
 * `data.maxPerPrincipal` (as this project's servers send it) or a message saying "already has N"
 * (or "holds N", "limit of N"). `undefined` when the refusal says no number.
 */
export function quotaOfRefusal(code: number, message: string, data: unknown): number | undefined {
  if (code !== ErrorCode.InvalidRequest) return undefined;
  const fromData = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['maxPerPrincipal'] : undefined;
  if (typeof fromData === 'number' && Number.isSafeInteger(fromData) && fromData > 0) return fromData;
  const said = /\b(?:already (?:has|holds)|limit of|at most)\s+(\d{1,9})\b/i.exec(message);
  const quota = said ? Number(said[1]) : undefined;
  return quota !== undefined && quota > 0 ? quota : undefined;
}

/** The fair share of a quota the gateway learnt (not configured): a tenth kept for callers holding none, at least 1 when there is room for it. */
export function learnedCapacity(maxTasks: number): UpstreamCapacity {
  return { maxTasks, reservedForNewCallers: Math.min(maxTasks - 1, Math.max(1, Math.ceil(maxTasks / 10))) };
}
