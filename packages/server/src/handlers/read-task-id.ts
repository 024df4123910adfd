import { isWellFormedTaskId, TaskNotFoundError } from '@mcp-tasks/core';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { toProtocolError } from '../errors/to-protocol-error.js';

/**
 * The `taskId` of a `tasks/*` request. A missing or ill-typed one is refused with -32602 saying
 * what is wrong; a string that could never be a task id gets the same answer as an unknown id.
 */
export function readTaskId(method: string, params: unknown): string {
  const taskId = typeof params === 'object' && params !== null ? (params as { taskId?: unknown }).taskId : undefined;
  if (taskId === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${method} needs params.taskId (a string)`);
  if (typeof taskId !== 'string') {
    const got = taskId === null ? 'null' : Array.isArray(taskId) ? 'an array' : `a ${typeof taskId}`;
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${method}: params.taskId must be a string, got ${got}`);
  }
  if (!isWellFormedTaskId(taskId)) throw toProtocolError(new TaskNotFoundError());
  return taskId;
}
