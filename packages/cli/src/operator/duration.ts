import { UsageError } from '../command-errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `5m`, `2h`, `1d`, `250ms` (or a bare number of seconds) in milliseconds. */
export function parseDuration(option: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new UsageError(`${option} takes a duration such as 90s, 5m, 2h or 1d (got ${JSON.stringify(text)})`);
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
}

/** A short age for a table cell: 45s, 12m, 3h, 2d. */
export function formatAge(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${Math.floor(ms / 1_000)}s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)}h`;
  return `${Math.floor(ms / 86_400_000)}d`;
}
