import type { TaskContext } from '@mcp-tasks/core';
import type { TaskTool } from './define-tool.js';
import { validateToolOutput } from './validate-output.js';

/**
 * A task tool's body as the runtime runs it, on the node that created the task or on one that
 * claimed it: the tool's `execute` in task mode, its result checked against `outputSchema`.
 * `prepared` is what `prepare` returned in the creating request (`undefined` on a claimed run,
 * which never saw that request).
 */
export function taskExecute(tool: TaskTool, prepared: unknown) {
  return (async (args: unknown, taskCtx: TaskContext) => validateToolOutput(tool, await tool.execute(args as never, { ...taskCtx, prepared, mode: 'task' }))) as never;
}
