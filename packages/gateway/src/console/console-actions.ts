import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BULK_CANCEL, type PostgresOperator } from '@mcp-tasks/postgres';
import { readBody } from '@mcp-tasks/server';
import type { CsrfGuard } from './csrf.js';
import type { ConsoleSession } from './session-cookie.js';
import { FilterError, taskFilterOf, taskIdOf } from './task-filter-query.js';

/** What the console's operator actions need. */
export interface ConsoleActionsContext {
  readonly operator: PostgresOperator;
  readonly csrf: CsrfGuard;
  /** Where each action is logged beside its history row. */
  readonly log: (line: string) => void;
}

type Reply = (status: number, body: unknown, headers?: Record<string, string>) => void;

const CANCEL_PATH = /^\/console\/api\/tasks\/([^/]{1,256})\/cancel$/;
const RETRY_PATH = /^\/console\/api\/tasks\/([^/]{1,256})\/retry$/;
/** A bulk cancel's ids (at most 1000 of at most 256 characters) and its filter fit in this. */
const MAX_BULK_BODY = 300 * 1024;
/** How many of a bulk cancel's matches the preview names; the rest are counted. */
const PREVIEWED = 10;

/** Who acts, as a task's history records a console action: the signed-in operator's subject. */
export function consoleActor(session: ConsoleSession): string {
  return `console:${session.subject}`;
}

/**
 * The console's operator actions, each a POST with the session's CSRF token, each recorded in
 * the history of every task it changes (who, when, what) and logged:
 * - `POST tasks/ID/cancel`: one task;
 * - `POST tasks/ID/retry`: a failed or cancelled task as a new one, where its tool allows it;
 * - `GET cancel-preview?…filters`: the live tasks a bulk cancel would take (what the page's
 *   confirmation shows), and `POST cancel` `{ taskIds, filter }`: exactly those, once confirmed.
 * Resolves false when `path` is none of them.
 */
export async function serveConsoleAction(context: ConsoleActionsContext, req: IncomingMessage, url: URL, session: ConsoleSession, host: string, reply: Reply): Promise<boolean> {
  const path = url.pathname;
  if (path === '/console/api/cancel-preview') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return done(reply(405, { error: 'use GET to preview a cancel' }, { allow: 'GET, HEAD' }));
    let filter;
    try {
      filter = taskFilterOf(url.searchParams);
    } catch (error) {
      if (error instanceof FilterError) return done(reply(400, { error: error.message }));
      throw error;
    }
    if (filter.status !== undefined && filter.status !== 'working' && filter.status !== 'input_required') {
      return done(reply(400, { error: `a ${filter.status} task has ended: cancel takes working or input_required tasks` }));
    }
    const { limit: _page, ...match } = filter;
    const statuses = match.status === undefined ? (['working', 'input_required'] as const) : [match.status];
    const pages = await Promise.all(statuses.map((status) => context.operator.listTasks({ ...match, status, limit: MAX_BULK_CANCEL + 1 })));
    const live = pages.flat().filter((task) => !task.expired);
    if (live.length > MAX_BULK_CANCEL) return done(reply(400, { error: `more than ${MAX_BULK_CANCEL} live tasks match: narrow the filter` }));
    return done(reply(200, { count: live.length, tasks: live.slice(0, PREVIEWED), taskIds: live.map((task) => task.taskId) }));
  }
  const single = CANCEL_PATH.exec(path);
  const retry = RETRY_PATH.exec(path);
  if (!single && !retry && path !== '/console/api/cancel') return false;
  if (req.method !== 'POST') return done(reply(405, { error: 'use POST' }, { allow: 'POST' }));
  if (!context.csrf.allows(req, session, host)) return done(reply(403, { error: 'missing or wrong CSRF token' }));
  const actor = consoleActor(session);
  if (single || retry) {
    const taskId = taskIdOf((single ?? retry)![1]!);
    if (taskId === undefined) return done(reply(400, { error: 'malformed task id' }));
    if (retry) {
      const outcome = await context.operator.retryTask(taskId, actor);
      if (!outcome.retried) return done(reply(outcome.reason === 'no such task' ? 404 : 409, { error: `task ${JSON.stringify(taskId)} is not retried: ${outcome.reason}` }));
      context.log(`console: operator ${JSON.stringify(session.subject)} retried task ${JSON.stringify(taskId)} as ${JSON.stringify(outcome.newTaskId)}`);
      return done(reply(200, outcome));
    }
    const outcome = await context.operator.cancelTask(taskId, actor);
    if (!outcome) return done(reply(404, { error: `no task ${JSON.stringify(taskId)}` }));
    if (outcome.cancelled) context.log(`console: operator ${JSON.stringify(session.subject)} cancelled task ${JSON.stringify(taskId)}`);
    return done(reply(200, { cancelled: outcome.cancelled, status: outcome.task.status, statusMessage: outcome.task.statusMessage }));
  }
  const bulk = bulkOf(await readBody(req, MAX_BULK_BODY));
  if (typeof bulk === 'string') return done(reply(400, { error: bulk }));
  const cancelled = await context.operator.cancelTasks({ taskIds: bulk.taskIds, actor, ...(bulk.filter === undefined ? {} : { filter: bulk.filter }) });
  context.log(`console: operator ${JSON.stringify(session.subject)} cancelled ${cancelled.length} of ${bulk.taskIds.length} tasks matching ${JSON.stringify(bulk.filter ?? '')}`);
  return done(reply(200, { requested: bulk.taskIds.length, cancelled }));
}

/** A bulk cancel's body, or what is wrong with it. */
function bulkOf(body: string | undefined): { taskIds: string[]; filter?: string } | string {
  if (body === undefined) return 'the body is too large';
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'the body must be JSON: { "taskIds": [...], "filter": "..." }';
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as { taskIds?: unknown; filter?: unknown };
  if (!Array.isArray(record.taskIds) || record.taskIds.length === 0) return 'taskIds must be a non-empty array of task ids';
  if (record.taskIds.length > MAX_BULK_CANCEL) return `at most ${MAX_BULK_CANCEL} task ids at once`;
  const taskIds: string[] = [];
  for (const id of record.taskIds) {
    const taskId = typeof id === 'string' ? taskIdOf(encodeURIComponent(id)) : undefined;
    if (taskId === undefined) return 'taskIds must hold task ids (strings of 1 to 256 characters)';
    taskIds.push(taskId);
  }
  if (record.filter !== undefined && (typeof record.filter !== 'string' || record.filter.length > 2048)) return 'filter must be a string of at most 2048 characters';
  return { taskIds, ...(typeof record.filter === 'string' ? { filter: record.filter } : {}) };
}

function done(_: void): true {
  return true;
}
