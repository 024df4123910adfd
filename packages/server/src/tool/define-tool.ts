import type { TaskContext, TaskOwner } from '@mcp-tasks/core';
import type { CallToolResult, Icon, InputRequiredResult, ServerContext, ToolAnnotations } from '@modelcontextprotocol/server';
import type * as z from 'zod';

/**
 * How a tool relates to tasks: `optional` runs as a task when the request declares the extension
 * and inline otherwise; `required` runs only as a task (-32021 without the extension);
 * `forbidden` never runs as a task.
 */
export type TaskSupport = 'optional' | 'required' | 'forbidden';

/** What `prepare` gets: the request, before any task exists. */
export interface PrepareContext {
  /** Whom the task will belong to. */
  readonly owner: TaskOwner;
  /**
   * Whether this call is to become a task (false: it runs inline). `prepare` runs once per
   * request: when the task then cannot start (owner at `maxPerPrincipal`, node draining), the
   * optional tool runs inline with the value `prepare` returned here, with `asTask` true.
   */
  readonly asTask: boolean;
  /** Answers the client sent with this round of the request (MRTR); untrusted. */
  readonly inputResponses: Readonly<Record<string, unknown>>;
  /**
   * The SDK's request context, for anything else (auth info, `requestState()`, the signal);
   * `undefined` when `prepare` runs inside a 2025-11-25 task on a node that claimed it, which
   * never saw the request.
   */
  readonly mcp: ServerContext | undefined;
}

/** What `execute` gets: the task context (or its inline stand-in) and what `prepare` returned. */
export interface ToolContext<Prepared = undefined> extends TaskContext {
  /** What `prepare` returned (`undefined` without `prepare`). */
  readonly prepared: Prepared;
  /** `task` when running as a task in the background, `inline` when running in the request. */
  readonly mode: 'task' | 'inline';
}

/** A tool result: the `CallToolResult` the task (or the request) ends with. */
export type ToolResult = CallToolResult;

/** What {@link defineTool} takes. */
export interface ToolDefinition<Input extends z.ZodType, Prepared = undefined> {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /** See {@link TaskSupport}. `true` in the seed is `optional`. */
  readonly task: TaskSupport;
  /** The arguments, checked before any task exists. */
  readonly input: Input;
  /** OAuth scopes the tool needs; recorded on its tasks, which then need them too. */
  readonly scopes?: readonly string[];
  readonly annotations?: ToolAnnotations;
  /**
   * The shape of the result's `structuredContent`, listed in `tools/list`. A result that is not
   * an error must then carry valid `structuredContent`, checked as the SDK checks ordinary tools:
   * inline, the SDK answers an `isError` result; as a task, it ends `failed` with the SDK's
   * -32602 `Output validation error`.
   */
  readonly outputSchema?: z.ZodType;
  readonly icons?: readonly Icon[];
  readonly _meta?: Readonly<Record<string, unknown>>;
  /**
   * Whether a task of the tool survives the loss of its node: when the node running it dies, is
   * found stale or drains past its deadline, the task is released and another node runs
   * `execute` again from the start, with the steps journaled through `ctx.step` returning their
   * results instead of running again. Up to the runtime's `maxAttempts` lost runs (hand-overs by
   * a draining node do not count). Default false: the task fails with its node.
   */
  readonly resumable?: boolean;
  /**
   * Whether an operator may retry a failed or cancelled task of the tool (`mcp-tasks tasks retry`,
   * the console's Retry): a new task with the same arguments and owner, queued for any node that
   * serves the tool. Only safe when running the tool twice is: the default is true for a
   * resumable tool or one annotated `idempotentHint: true`, false otherwise. Recorded on each task
   * when it is created, so the policy of the code that made the task decides.
   */
  readonly retry?: boolean;
  /**
   * Runs in the original request before any task exists. Return an `InputRequiredResult`
   * (`inputRequired(...)` from the SDK) to ask the client for input on that request (MRTR); the
   * client retries with `inputResponses`. Anything else is handed to `execute` as `ctx.prepared`.
   * Throw an SDK `ProtocolError` to refuse the call.
   */
  readonly prepare?: (args: z.output<Input>, ctx: PrepareContext) => Prepared | InputRequiredResult | Promise<Prepared | InputRequiredResult>;
  /**
   * The tool's work: in the background as a task, or inline in the request. A plain throw ends
   * with an `isError: true` result carrying its message (a task: `completed`); a thrown JSON-RPC
   * error (`ProtocolError`) answers the request with it (a task: `failed`).
   */
  readonly execute: (args: z.output<Input>, ctx: ToolContext<Prepared>) => ToolResult | Promise<ToolResult>;
}

/** A tool defined with {@link defineTool}, ready for `McpTasks.register`. */
export interface TaskTool<Args = unknown, Prepared = unknown> {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly task: TaskSupport;
  readonly input: z.ZodType<Args>;
  readonly scopes: readonly string[];
  readonly annotations?: ToolAnnotations;
  readonly outputSchema?: z.ZodType;
  readonly icons?: readonly Icon[];
  readonly _meta?: Readonly<Record<string, unknown>>;
  readonly resumable: boolean;
  /** See {@link ToolDefinition.retry}; the default resolved. */
  readonly retry: boolean;
  readonly prepare?: (args: Args, ctx: PrepareContext) => Prepared | InputRequiredResult | Promise<Prepared | InputRequiredResult>;
  readonly execute: (args: Args, ctx: ToolContext<Prepared>) => ToolResult | Promise<ToolResult>;
}

/**
 * A task tool of any argument and `prepare` types, as `McpTasks.register` takes a list of them.
 * A tool's functions accept only what its own schema and `prepare` produce, which the adapter
 * guarantees (it parses with `input` and passes `prepare`'s value on), so the erased form takes
 * `never` there: every `TaskTool<Args, Prepared>` is an `AnyTaskTool`, without `any`.
 */
export interface AnyTaskTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly task: TaskSupport;
  readonly input: z.ZodType;
  readonly scopes: readonly string[];
  readonly annotations?: ToolAnnotations;
  readonly outputSchema?: z.ZodType;
  readonly icons?: readonly Icon[];
  readonly _meta?: Readonly<Record<string, unknown>>;
  readonly resumable: boolean;
  readonly retry: boolean;
  readonly prepare?: (args: never, ctx: PrepareContext) => unknown;
  readonly execute: (args: never, ctx: ToolContext<never>) => ToolResult | Promise<ToolResult>;
}

const TASK_SUPPORT: readonly TaskSupport[] = ['optional', 'required', 'forbidden'];

/** Defines a tool that may run as an MCP task. */
export function defineTool<Input extends z.ZodType, Prepared = undefined>(
  definition: ToolDefinition<Input, Prepared>,
): TaskTool<z.output<Input>, Prepared> {
  if (typeof definition.name !== 'string' || definition.name === '') throw new TypeError('defineTool: name must be a non-empty string');
  if (!TASK_SUPPORT.includes(definition.task)) {
    throw new TypeError(`defineTool(${definition.name}): task must be 'optional', 'required' or 'forbidden'`);
  }
  if (typeof definition.execute !== 'function') throw new TypeError(`defineTool(${definition.name}): execute must be a function`);
  if (definition.resumable !== undefined && typeof definition.resumable !== 'boolean') throw new TypeError(`defineTool(${definition.name}): resumable must be a boolean`);
  if (definition.retry !== undefined && typeof definition.retry !== 'boolean') throw new TypeError(`defineTool(${definition.name}): retry must be a boolean`);
  const resumable = definition.resumable ?? false;
  return {
    ...definition,
    resumable,
    retry: definition.retry ?? (resumable || definition.annotations?.idempotentHint === true),
    input: definition.input as unknown as z.ZodType<z.output<Input>>,
    scopes: [...(definition.scopes ?? [])],
  };
}
