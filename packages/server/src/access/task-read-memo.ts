import { ownerKey, type TaskSnapshot, type TaskRef } from '@mcp-tasks/core';

/**
 * The task the scope challenge read for one request, handed to that request's handler so an
 * authorised `tasks/*` reads its task once. Lives as long as the request's McpServer (one per
 * request with `createMcpHandler`); a value is taken once, and only for the same owner.
 */
export class TaskReadMemo {
  readonly #reads = new Map<string, TaskSnapshot | null>();

  remember(ref: TaskRef, record: TaskSnapshot | undefined): void {
    this.#reads.set(keyOf(ref), record ?? null);
  }

  /** What the challenge read for `ref` (`null`: nothing found), or `undefined` when it did not read. */
  take(ref: TaskRef): TaskSnapshot | null | undefined {
    const key = keyOf(ref);
    const read = this.#reads.get(key);
    this.#reads.delete(key);
    return read;
  }
}

function keyOf(ref: TaskRef): string {
  return `${ref.taskId} ${ownerKey(ref.owner)}`;
}
