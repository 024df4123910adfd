import { assertJsonObject, InvalidTaskValueError, type JsonObject } from '@mcp-tasks/core';

/**
 * The largest `prepare` value a task stores for a run on another node. A larger one is not
 * stored (the claimed run gets `ctx.prepared === undefined`): the row stays small, and the value
 * still reaches the run on the creating node.
 */
export const MAX_CARRIED_PREPARED_BYTES = 64 * 1024;

/** What a task of a tool with `prepare` stores for its run, read back on whichever node runs it. */
export type RunCarry =
  /** `prepare` runs at the start of the task (a 2025-11-25 task: that revision has no input on the request). */
  | { readonly prepare: 'in-task' }
  /** `prepare` ran in the creating request and returned this JSON value. */
  | { readonly prepared: unknown }
  /** Nothing is known: no `prepare`, or its value is not JSON or too large to store. */
  | Record<string, never>;

/** The carry of a task whose `prepare` runs inside it. */
export const PREPARE_IN_TASK: JsonObject = { prepare: 'in-task' };

/**
 * The carry of `prepare`'s value, or `undefined` when it cannot be stored as it is: a value JSON
 * would change (a `Date`, a class instance, `undefined`), or one over {@link MAX_CARRIED_PREPARED_BYTES}.
 */
export function carryPrepared(prepared: unknown): JsonObject | undefined {
  if (prepared === undefined) return undefined;
  try {
    return assertJsonObject({ prepared }, 'prepared', MAX_CARRIED_PREPARED_BYTES);
  } catch (error) {
    if (error instanceof InvalidTaskValueError) return undefined;
    throw error;
  }
}

/** The carry a run received (`undefined`: a task created without one). */
export function readCarry(carried: JsonObject | undefined): RunCarry {
  if (carried?.['prepare'] === 'in-task') return { prepare: 'in-task' };
  if (carried !== undefined && 'prepared' in carried) return { prepared: carried['prepared'] };
  return {};
}
