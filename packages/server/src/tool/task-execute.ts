import { extendTaskContext, type JsonObject, type TaskContext, type TaskExecute } from '@mcp-tasks/core';
import { prepareThenExecute } from './prepare-then-execute.js';
import type { TaskTool } from './define-tool.js';
import { readCarry } from './run-carry.js';
import { validateToolOutput } from './validate-output.js';

/**
 * A task tool's body as the runtime runs it on the node that created the task: the tool's
 * `execute` in task mode with what `prepare` returned in the creating request, its result
 * checked against `outputSchema`.
 */
export function taskExecute(tool: TaskTool, prepared: unknown) {
  return runExecute(tool, prepared) as never;
}

function runExecute(tool: TaskTool, prepared: unknown) {
  return async (args: unknown, taskCtx: TaskContext) => validateToolOutput(tool, await tool.execute(args as never, extendTaskContext(taskCtx, { prepared, mode: 'task' as const })));
}

/**
 * The same body on a node that claimed the task and never saw the creating request: what that
 * request stored for the run decides. A task whose `prepare` runs inside it (2025-11-25) runs
 * `prepare` first here too (its `ctx.mcp` is `undefined`); otherwise `execute` gets the stored
 * value of `prepare` (`undefined` when it could not be stored, or for a task stored before
 * values were).
 */
export function claimedTaskExecute(tool: TaskTool): TaskExecute<never> {
  return (async (args: unknown, taskCtx: TaskContext, carried?: JsonObject) => {
    const carry = readCarry(carried);
    if ('prepare' in carry && tool.prepare) return prepareThenExecute(tool, taskCtx.owner, undefined)(args, taskCtx);
    return runExecute(tool, 'prepared' in carry ? carry.prepared : undefined)(args, taskCtx);
  }) as never;
}
