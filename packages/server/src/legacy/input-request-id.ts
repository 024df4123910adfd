import { isWellFormedTaskId } from '@mcp-tasks/core';

const PREFIX = 'mcp-tasks.input.';

/** What a server-to-client request id names: one input key of one task. */
export interface InputRequestTarget {
  readonly taskId: string;
  readonly key: string;
}

/**
 * The JSON-RPC id of the server-to-client request that asks a task's input `key` of a
 * 2025-11-25 client. The 1.x client answers it with a bare `{ jsonrpc, id, result }` POST that may
 * land on any node, carrying nothing else: the id alone names the task and the key, and the
 * node that receives the answer finds the task in PostgreSQL under the POSTer's own owner, so an
 * id says nothing that the owner-scoped lookup does not check.
 */
export function inputRequestId(target: InputRequestTarget): string {
  return `${PREFIX}${target.taskId}.${Buffer.from(target.key, 'utf8').toString('base64url')}`;
}

/** The task and key an id names, or `undefined` for an id this server did not mint. */
export function readInputRequestId(id: unknown): InputRequestTarget | undefined {
  if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > 1024) return undefined;
  const rest = id.slice(PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot < 0) return undefined;
  const taskId = rest.slice(0, dot);
  const encodedKey = rest.slice(dot + 1);
  if (!isWellFormedTaskId(taskId) || !/^[A-Za-z0-9_-]+$/.test(encodedKey)) return undefined;
  const key = Buffer.from(encodedKey, 'base64url').toString('utf8');
  // Only the one spelling this server mints: no two ids name the same key.
  return key !== '' && inputRequestId({ taskId, key }) === id ? { taskId, key } : undefined;
}
