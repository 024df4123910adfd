import diagnosticsChannel from 'node:diagnostics_channel';
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { TaskStatus } from '../task/task-status.js';

/** The name of the tracing channel around a task's run: `tracing:mcp-tasks:task:start|end|error`. */
export const TASK_RUN_CHANNEL = 'mcp-tasks:task';

/** The name of the channel that carries every status transition a node makes. */
export const TASK_STATUS_CHANNEL = 'mcp-tasks:task:status';

/**
 * The message of the run's tracing channel. The same object is published on `start`, on `error`
 * (with `error` set, when the tool threw) and on `end` (with `status` set to the final status,
 * which is `cancelled` when a cancel won the race with the tool).
 */
export interface TaskRunMessage {
  readonly taskId: string;
  readonly tool: string;
  /** The MCP server (the owner's `server`). */
  readonly server: string;
  readonly nodeId: string;
  /** On `end`: the task's status after the run, or `null` when it expired or vanished meanwhile. */
  status?: TaskStatus | null;
  /** On `error`: what the tool threw. */
  error?: unknown;
  /** On `end` and `error`: the JSON-RPC error the task failed with, if it failed. */
  rpcError?: JsonRpcErrorObject;
}

/** The message of {@link TASK_STATUS_CHANNEL}. */
export interface TaskStatusMessage {
  readonly taskId: string;
  readonly tool: string;
  readonly server: string;
  readonly nodeId: string;
  /** The status the task moved to. */
  readonly status: TaskStatus;
  /** When this node made or saw the transition. */
  readonly at: Date;
}

/** The channels, created once per process so subscribers and publishers meet. */
export const taskRunChannel = diagnosticsChannel.tracingChannel<unknown, TaskRunMessage & object>(TASK_RUN_CHANNEL);
export const taskStatusChannel = diagnosticsChannel.channel(TASK_STATUS_CHANNEL);
