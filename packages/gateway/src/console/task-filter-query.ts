import type { TaskStatus } from '@mcp-tasks/core';
import type { OperatorTaskFilter } from '@mcp-tasks/postgres';

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The console's pages are at most this long: one page is one bounded query. */
export const MAX_PAGE = 200;
const MAX_TEXT = 256;
/** Ten years: a longer age is no task's, and PostgreSQL's intervals end not far beyond. */
const MAX_AGE_MS = 10 * 365 * UNITS['d']!;
// PostgreSQL text cannot hold NUL, and no id, name or subject has a control character.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A query string the console's API refuses, with what was wrong. */
export class FilterError extends Error {}

/**
 * `GET /console/api/tasks`'s query as the operator's filter: the filters of `tasks list`
 * (`status`, `tool`, `node`, `owner`, `olderThan` as 90s/5m/2h/1d), `limit` (1 to 200,
 * default 50) and `after` (the last id of the previous page).
 */
export function taskFilterOf(query: URLSearchParams): OperatorTaskFilter & { limit: number } {
  const known = new Set(['status', 'tool', 'node', 'owner', 'olderThan', 'limit', 'after']);
  for (const name of query.keys()) if (!known.has(name)) throw new FilterError(`unknown parameter ${JSON.stringify(name)}`);
  const text = (name: string) => {
    const value = query.get(name) ?? '';
    if (value.length > MAX_TEXT) throw new FilterError(`${name} is longer than ${MAX_TEXT} characters`);
    if (CONTROL.test(value)) throw new FilterError(`${name} has a control character`);
    return value === '' ? undefined : value;
  };
  const status = text('status');
  if (status !== undefined && !STATUSES.includes(status as TaskStatus)) throw new FilterError(`status must be one of ${STATUSES.join(', ')}`);
  const olderThan = text('olderThan');
  const limitText = text('limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new FilterError(`limit must be an integer from 1 to ${MAX_PAGE}`);
  const tool = text('tool');
  const nodeId = text('node');
  const ownerSubject = text('owner');
  const after = text('after');
  return {
    limit,
    ...(status === undefined ? {} : { status: status as TaskStatus }),
    ...(tool === undefined ? {} : { tool }),
    ...(nodeId === undefined ? {} : { nodeId }),
    ...(ownerSubject === undefined ? {} : { ownerSubject }),
    ...(after === undefined ? {} : { after }),
    ...(olderThan === undefined ? {} : { olderThanMs: durationMs(olderThan) }),
  };
}

function durationMs(text: string): number {
  const match = /^(\d{1,9}(?:\.\d{1,3})?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new FilterError(`olderThan takes a duration such as 90s, 5m, 2h or 1d (got ${JSON.stringify(text)})`);
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
  if (ms > MAX_AGE_MS) throw new FilterError(`olderThan is at most 3650d (got ${JSON.stringify(text)})`);
  return ms;
}

/** A task id from the API's path, or undefined when it is not one (malformed escapes, control characters). */
export function taskIdOf(segment: string): string | undefined {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return id === '' || id.length > MAX_TEXT || CONTROL.test(id) ? undefined : id;
}
