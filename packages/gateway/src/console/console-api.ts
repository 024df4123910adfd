import type { IncomingMessage, ServerResponse } from 'node:http';
import { countsByStatus, inputQuestionOf, operatorErrorOf, redactedValue, withoutStack, type ClusterStats, type OperatorTaskDetail, type OperatorTaskSteps, type PostgresOperator } from '@mcp-tasks/postgres';
import type { CsrfGuard } from './csrf.js';
import type { ConsoleSession } from './session-cookie.js';
import { FilterError, taskFilterOf, taskIdOf } from './task-filter-query.js';
import { serveConsoleAction } from './console-actions.js';

/** What the console's API reads and changes. */
export interface ConsoleApiContext {
  readonly operator: PostgresOperator;
  /** The cluster's counts as this node last read them (the maintenance leader computes them). */
  readonly stats: () => ClusterStats | undefined;
  readonly csrf: CsrfGuard;
  /** Where an operator's cancel is recorded. */
  readonly log: (line: string) => void;
}

const TASK_PATH = /^\/console\/api\/tasks\/([^/]{1,256})$/;

/**
 * `/console/api/*`, for a signed-in session (console-handler.ts checked the cookie):
 * - `GET session`: who is signed in, and the CSRF token the page sends with a cancel;
 * - `GET summary`: the cluster's counts by node and status, and the nodes with lease health;
 * - `GET tasks?…`: a page of tasks (filters of `tasks list`), newest first, and the next cursor;
 * - `GET tasks/ID`: one task's detail, what its owner gave and got only as keys and sizes, and
 *   its history;
 * - the operator actions of console-actions.ts (cancel, retry, bulk cancel; CSRF token in `x-csrf-token`).
 */
export async function serveConsoleApi(context: ConsoleApiContext, req: IncomingMessage, res: ServerResponse, url: URL, session: ConsoleSession, host: string): Promise<void> {
  const path = url.pathname;
  if (await serveConsoleAction(context, req, url, session, host, (status, body, headers) => json(res, status, body, headers))) return;
  if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: `${req.method ?? ''} is not allowed here` }, { allow: 'GET, HEAD' });
  if (path === '/console/api/session') return json(res, 200, { subject: session.subject, expiresAt: new Date(session.expiresAt).toISOString(), csrfToken: context.csrf.tokenFor(session) });
  if (path === '/console/api/summary') return json(res, 200, { stats: statsJson(context.stats()), nodes: await context.operator.listNodes() });
  if (path === '/console/api/tasks') {
    let filter;
    try {
      filter = taskFilterOf(url.searchParams);
    } catch (error) {
      if (error instanceof FilterError) return json(res, 400, { error: error.message });
      throw error;
    }
    // One more than the page, to know whether there is a next one.
    const rows = await context.operator.listTasks({ ...filter, limit: filter.limit + 1 });
    const page = rows.slice(0, filter.limit);
    // A row carries the owner by subject and nothing of the task's data.
    return json(res, 200, { tasks: page.map((row) => ({ ...row, statusMessage: row.statusMessage === null ? null : withoutStack(row.statusMessage) })), next: rows.length > filter.limit ? page[page.length - 1]!.taskId : null });
  }
  const task = TASK_PATH.exec(path);
  if (task) {
    const taskId = taskIdOf(task[1]!);
    if (taskId === undefined) return json(res, 400, { error: 'malformed task id' });
    const detail = await context.operator.getTask(taskId);
    if (!detail) return json(res, 404, { error: `no task ${JSON.stringify(taskId)} (it may have been swept after its TTL)` });
    const [steps, history] = await Promise.all([context.operator.getTaskSteps(taskId), context.operator.getTaskHistory(taskId)]);
    return json(res, 200, { ...(detailJson(detail, steps) as object), history: history ?? null });
  }
  return json(res, 404, { error: 'no such console API' });
}

function statsJson(stats: ClusterStats | undefined): unknown {
  if (!stats) return null;
  return { computedAt: stats.computedAt, computedBy: stats.computedBy, byStatus: countsByStatus(stats), counts: stats.counts, oldestLiveAgeMs: stats.oldestLiveAgeMs };
}

/**
 * A task's detail as `tasks show` prints it without `--reveal`: the owner by subject, what the
 * owner gave and got as keys and sizes, the question a task asks as its form, a failure's code
 * and message (its data as keys and size, no stack).
 */
function detailJson(task: OperatorTaskDetail, journal: OperatorTaskSteps): unknown {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage === null ? null : withoutStack(task.statusMessage),
    tool: task.tool,
    owner: { subject: task.owner.subject, server: task.owner.server },
    nodeId: task.nodeId,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    expiresAt: task.expiresAt,
    expired: task.expired,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    attempt: task.attempt,
    maxAttempts: task.maxAttempts,
    resumable: task.resumable,
    handovers: task.handovers,
    args: redactedValue(task.args, false),
    inputs: Object.entries(task.inputs).map(([key, input]) => ({
      key,
      method: String((input.request as { method?: unknown }).method ?? '?'),
      question: inputQuestionOf(input.request),
      answered: input.response !== undefined,
      response: redactedValue(input.response, false),
    })),
    result: redactedValue(task.result, false),
    toolError: task.status === 'completed' && (task.result as { isError?: unknown } | null)?.isError === true,
    error: task.error === null ? null : operatorErrorOf(task.error),
    steps: journal.steps,
    stepCount: journal.total,
  };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) }).end(text);
}
