import type { TaskOwner, TaskRuntime } from '@mcp-tasks/core';
import type { ServerContext } from '@modelcontextprotocol/server';

/** What the `tasks/*` and `tools/call` handlers share: the runtime and how to tell the owner. */
export interface HandlerDeps {
  readonly runtime: TaskRuntime;
  /** The owner of the request's caller. */
  ownerOf(ctx: ServerContext): Promise<TaskOwner>;
}
