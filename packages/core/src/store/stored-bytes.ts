import type { NewTask } from '../task/task-record.js';
import type { TaskOutcome } from './task-store.js';

/**
 * What a task's row costs beyond the values it stores (its columns, its index entries, a small
 * result), charged to every task: so an owner's stored-bytes bound also bounds how many tasks it
 * keeps, whatever little each stores.
 */
export const TASK_ROW_BYTES = 1024;

/** The bytes of a task's result or error that its row's charge covers; beyond them, the rest is charged at its finish. */
export const RESULT_ALLOWANCE_BYTES = 1024;

/**
 * Which pool a new task's bytes are charged to, and how many that pool may keep until its tasks
 * expire ({@link CreateOptions.storage}).
 */
export interface StoredBytesBound {
  /** `owner`: the task's owner's own pool; `shared`: the one every caller without an authenticated subject shares. */
  readonly pool: 'owner' | 'shared';
  /** Most bytes the pool keeps (a positive integer). */
  readonly maxBytes: number;
}

/** What creating `task` charges: its row, its arguments and its stored capabilities, in UTF-8 bytes of their JSON. */
export function storedBytesOf(task: Pick<NewTask, 'args' | 'clientCapabilities'>): number {
  return TASK_ROW_BYTES + jsonBytes(task.args) + jsonBytes(task.clientCapabilities);
}

/** What finishing a task with `outcome` charges on top of its creation: the result or error beyond {@link RESULT_ALLOWANCE_BYTES}. */
export function outcomeChargeOf(outcome: TaskOutcome): number {
  const bytes = jsonBytes(outcome.status === 'completed' ? outcome.result : outcome.error);
  return Math.max(0, bytes - RESULT_ALLOWANCE_BYTES);
}

function jsonBytes(value: unknown): number {
  return value == null ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8');
}
