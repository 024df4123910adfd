import type { JsonObject, TaskExecute, TaskOwner, TaskRecord, TaskRuntime } from '@mcp-tasks/core';
import { clientCapabilitiesOf, type EnvelopeCarrier } from '../capability/client-capabilities.js';
import { storedClientCapabilities } from '../capability/stored-client-capabilities.js';
import type { TaskTool } from '../tool/define-tool.js';

/** What a `tools/call` that becomes a task hands the runtime beside the tool and its arguments. */
export interface ToolTaskStart {
  readonly owner: TaskOwner;
  /** The checked arguments ({@link checkArguments}). */
  readonly args: unknown;
  /** How the task runs the tool. */
  readonly execute: TaskExecute<unknown>;
  /** What a node that claims the task needs to run it as this one would. */
  readonly carried?: JsonObject | undefined;
  readonly ttlMs?: number | undefined;
  /** Whether the request carried auth info: its tasks then count against the owner's stored-bytes bound, else the shared one. */
  readonly authenticated: boolean;
}

/**
 * Commits the task of one `tools/call`, with the client capabilities of the request's envelope
 * that its run checks (it asks the client only for what it can answer; nothing else is stored). Both request paths start tasks here, so
 * a task started by either is the same row. Throws what the runtime throws (quota, draining).
 */
export function startToolTask(runtime: TaskRuntime, tool: TaskTool, ctx: EnvelopeCarrier, start: ToolTaskStart): Promise<TaskRecord> {
  const declared = clientCapabilitiesOf(ctx);
  const clientCapabilities = declared === undefined ? undefined : storedClientCapabilities(declared);
  return runtime.start({
    owner: start.owner,
    tool: tool.name,
    scopes: tool.scopes,
    args: start.args,
    resumable: tool.resumable,
    authenticated: start.authenticated,
    retry: tool.retry,
    ...(clientCapabilities === undefined ? {} : { clientCapabilities }),
    ...(start.carried === undefined ? {} : { carried: start.carried }),
    ...(start.ttlMs === undefined ? {} : { ttlMs: start.ttlMs }),
    execute: start.execute,
  });
}
