import type { TaskRecord } from '../task/task-record.js';
import type { TaskLabels } from '../telemetry/task-telemetry.js';

/** What names a stored task in telemetry. */
export function labelsOf(task: TaskRecord): TaskLabels {
  return { taskId: task.taskId, tool: task.tool, server: task.owner.server, owner: task.owner };
}
