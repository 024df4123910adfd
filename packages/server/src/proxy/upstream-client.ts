import type { JsonObject } from '@mcp-tasks/core';

/** A tool as the upstream lists it (its own name, its JSON Schemas). */
export interface UpstreamTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  readonly annotations?: JsonObject;
  /** True when the upstream runs the tool only as a task (its `execution.taskSupport` is `required`). */
  readonly taskRequired?: boolean;
}

/** A task as the upstream reports it (`tasks/get`), whatever its revision. */
export interface UpstreamTask {
  readonly taskId: string;
  readonly status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  readonly statusMessage?: string;
  readonly pollIntervalMs?: number;
  /** Outstanding input requests (`input_required`), by key. */
  readonly inputRequests?: Readonly<Record<string, JsonObject>>;
  /** The result (`completed`). */
  readonly result?: JsonObject;
  /** The JSON-RPC error (`failed`). */
  readonly error?: JsonObject & { code: number; message: string };
  /** The upstream session the task belongs to (a stateful 2025-11-25 upstream); every later request on it goes through that session. */
  readonly session?: string;
}

/** How one upstream answered a `tools/call`. */
export type UpstreamCallOutcome =
  /** A plain result, answered at once. */
  | { readonly kind: 'result'; readonly result: JsonObject }
  /** Input asked for on the request itself (multi-round-trip), before any task. */
  | { readonly kind: 'input_required'; readonly inputRequests: Readonly<Record<string, JsonObject>>; readonly requestState?: string }
  /** The upstream made a task of the call. */
  | { readonly kind: 'task'; readonly task: UpstreamTask };

/** What a `tools/call` sends upstream besides the tool and its arguments. */
export interface UpstreamCallOptions {
  /** Whether the call declares the tasks extension (false: an optional tool runs inline upstream). */
  readonly tasks: boolean;
  /** The caller's client capabilities (elicitation, sampling, roots), so the upstream asks only what the caller can answer. */
  readonly clientCapabilities?: JsonObject;
  /** The caller's trace context (`traceparent`, `tracestate`, `baggage`), carried in `_meta`. */
  readonly traceContext?: Readonly<Record<string, string>>;
  /** The answers of a multi-round-trip retry, forwarded as they came. */
  readonly inputResponses?: JsonObject;
  /** The upstream's own `requestState` of the previous round. */
  readonly requestState?: string;
  /** Ends the request (the connection is dropped, which ends it upstream too). */
  readonly signal?: AbortSignal;
}

/** What a task listen stream reports ({@link UpstreamClient.listenTasks}). */
export interface UpstreamTaskListener {
  /** The upstream agreed to follow these of the tasks asked for. */
  onAcknowledged(taskIds: readonly string[]): void;
  /** A followed task's current state, as `tasks/get` would answer it. */
  onTask(task: UpstreamTask): void;
}

/**
 * One upstream MCP server as the proxy talks to it: one implementation per protocol revision
 * (2026-07-28 with the tasks extension; 2025-11-25 with its tasks). Every method rejects with an
 * {@link UpstreamError} naming the mounted upstream, never its URL, and waits a bounded time.
 */
export interface UpstreamClient {
  /** The protocol revision it speaks. */
  readonly revision: string;
  listTools(): Promise<UpstreamTool[]>;
  callTool(name: string, args: JsonObject, options: UpstreamCallOptions): Promise<UpstreamCallOutcome>;
  /** The task, or `undefined` when the upstream no longer knows it (expired, gone); `session` is the task's own ({@link UpstreamTask.session}). */
  getTask(taskId: string, session?: string): Promise<UpstreamTask | undefined>;
  /** Forwards answers to outstanding input requests, keys unchanged. */
  updateTask(taskId: string, inputResponses: JsonObject, session?: string): Promise<void>;
  cancelTask(taskId: string, session?: string): Promise<void>;
  /**
   * Follows many tasks on one stream (2026-07-28: `subscriptions/listen` with `taskIds`), for an
   * upstream that offers it: resolves when the stream ends or `signal` aborts; rejects with an
   * {@link UpstreamRpcError} (or a non-retryable {@link UpstreamError}) when the upstream does
   * not offer it. Absent: the relays poll `getTask`.
   */
  listenTasks?(taskIds: readonly string[], listener: UpstreamTaskListener, signal: AbortSignal): Promise<void>;
}
