import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { JsonObject } from '../json/json-value.js';
import type { TaskRef } from '../store/task-store.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { TaskContext } from './task-context.js';

/**
 * A tool's task body: returns the tool result (a `CallToolResult` object) or throws. `carried` is
 * what the creating request carried for the run ({@link TaskRunRequest.carried}), on the node
 * that created the task and on one that claimed it alike.
 */
export type TaskExecute<Args> = (args: Args, ctx: TaskContext, carried?: JsonObject) => Promise<JsonObject> | JsonObject;

/** How a node runs a tool's tasks it claims: the tool's body, found by the task's tool name. */
export interface TaskExecutor {
  readonly execute: TaskExecute<never>;
  /** Whether a task of the tool is released for another run (instead of failed) when its node gives it up. */
  readonly resumable: boolean;
}

/** Which task an error passed to `onError` belongs to; `ref` is the reference the client was shown, if any. */
export type TaskErrorContext = TaskRef & { tool: string; ref?: string };

/** What `TaskRuntime.start` runs (and what a claim rebuilds from the stored task). */
export interface TaskRunRequest<Args> {
  readonly owner: TaskOwner;
  readonly tool: string;
  /** Scopes the tool required; recorded on the task. */
  readonly scopes?: readonly string[];
  readonly args: Args;
  readonly execute: TaskExecute<Args>;
  /**
   * The client capabilities the creating request declared. Input the tool asks for must be
   * covered by them (`InputNotSupportedError` otherwise); `undefined` checks nothing (the
   * capabilities are not known, e.g. for 2025-11-25 clients). Stored with the task, so a later
   * run on any node checks the same capabilities.
   */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * What a run of the task needs from the creating request beyond its arguments (the MCP layer's
   * protocol revision, `prepare`'s value), stored with the task so that a node claiming it gets
   * the same; handed to `execute` as its third argument. It counts against the stored client
   * capabilities' size limit.
   */
  readonly carried?: JsonObject;
  /**
   * The time to live the client asked for (2025-11-25 `params.task.ttl`): honoured up to the
   * runtime's `ttlMs`, never beyond it. Default: the runtime's `ttlMs`.
   */
  readonly ttlMs?: number;
  /** Whether the task survives the loss of its node (see {@link TaskExecutor.resumable}). Default false. */
  readonly resumable?: boolean;
  /**
   * Whether the owner is an authenticated subject (the request carried auth info): its tasks then
   * count against `maxStoredBytesPerOwner`, and otherwise against the shared
   * `maxStoredBytesWithoutSubject`. Default true.
   */
  readonly authenticated?: boolean;
  /**
   * Whether an operator may run the task again as a new task with the same arguments and owner
   * once it failed or was cancelled. Default: {@link resumable} (a tool that may run twice).
   * Stored with the task only when it differs from that default.
   */
  readonly retry?: boolean;
}
