/** The status of a task. `completed`, `failed` and `cancelled` are terminal and final. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A status a task can still leave. */
export type LiveTaskStatus = 'working' | 'input_required';

/** A status a task never leaves. */
export type TerminalTaskStatus = 'completed' | 'failed' | 'cancelled';

/** Every status, in lifecycle order. */
export const TASK_STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/** The statuses a task can still leave; every write is guarded by one of these. */
export const LIVE_STATUSES: readonly LiveTaskStatus[] = ['working', 'input_required'];

/** Whether `status` is one of the five statuses (for values read from the wire or a database). */
export function isTaskStatus(status: unknown): status is TaskStatus {
  return typeof status === 'string' && (TASK_STATUSES as readonly string[]).includes(status);
}

/** Whether a task with this status is finished for good. */
export function isTerminal(status: TaskStatus): status is TerminalTaskStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
