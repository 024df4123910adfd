import { InvalidCursorError } from '../errors/invalid-cursor-error.js';
import { isWellFormedTaskId } from '../task/task-id.js';
import type { TaskRecord } from '../task/task-record.js';

/** Options of `TaskStore.list`. */
export interface ListTasksOptions {
  /** Where the previous page ended: its `nextCursor`, unchanged. */
  readonly cursor?: string;
  /** Tasks per page, 1 to {@link TASK_PAGE_LIMITS.max}. Default {@link TASK_PAGE_LIMITS.default}. */
  readonly limit?: number;
}

/** One page of an owner's tasks, newest first. */
export interface TaskPage {
  readonly tasks: readonly TaskRecord[];
  /** Present when more tasks follow: the cursor of the next page. */
  readonly nextCursor?: string;
}

export const TASK_PAGE_LIMITS = { default: 50, max: 100 } as const;

/** Where a page ends: the last task's creation time and id (ties on the time are broken by id). */
export interface TaskPagePosition {
  readonly createdAtMs: number;
  readonly taskId: string;
}

const PREFIX = 'tp1.';

/**
 * The cursor after `task`. Opaque to clients; it names a position in the owner's own list, so a
 * cursor taken from another owner's list reveals nothing and skips nothing of one's own.
 */
export function encodeTaskCursor(task: Pick<TaskRecord, 'createdAt' | 'taskId'>): string {
  return PREFIX + Buffer.from(JSON.stringify([task.createdAt.getTime(), task.taskId]), 'utf8').toString('base64url');
}

/** The position a cursor names; {@link InvalidCursorError} (-32602) for anything this server did not hand out. */
export function decodeTaskCursor(cursor: unknown): TaskPagePosition {
  if (typeof cursor !== 'string' || !cursor.startsWith(PREFIX) || cursor.length > 200) throw new InvalidCursorError();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw new InvalidCursorError();
  const [createdAtMs, taskId] = parsed as [unknown, unknown];
  if (!Number.isSafeInteger(createdAtMs) || (createdAtMs as number) < 0 || !isWellFormedTaskId(taskId)) throw new InvalidCursorError();
  return { createdAtMs: createdAtMs as number, taskId: taskId as string };
}

/** The page size `options` asks for, checked. */
export function pageLimitOf(options: ListTasksOptions): number {
  const limit = options.limit ?? TASK_PAGE_LIMITS.default;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > TASK_PAGE_LIMITS.max) {
    throw new RangeError(`limit must be an integer from 1 to ${TASK_PAGE_LIMITS.max}`);
  }
  return limit;
}

/** Whether `task` comes after `position` in newest-first order. */
export function isAfter(task: Pick<TaskRecord, 'createdAt' | 'taskId'>, position: TaskPagePosition): boolean {
  const t = task.createdAt.getTime();
  return t < position.createdAtMs || (t === position.createdAtMs && task.taskId < position.taskId);
}

/** The page of `limit` out of `newestFirst` (which may hold one more task, to tell whether more follow). */
export function toTaskPage(newestFirst: readonly TaskRecord[], limit: number): TaskPage {
  const tasks = newestFirst.slice(0, limit);
  const last = tasks[tasks.length - 1];
  return newestFirst.length > limit && last ? { tasks, nextCursor: encodeTaskCursor(last) } : { tasks };
}
