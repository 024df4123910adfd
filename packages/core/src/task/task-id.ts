import { randomBytes } from 'node:crypto';

/** Bytes of randomness in a task id: 144 bits, so ids cannot be guessed or enumerated. */
export const TASK_ID_BYTES = 18;

/** A new task id: 144 bits from the crypto RNG as 24 URL-safe characters. */
export function newTaskId(): string {
  return randomBytes(TASK_ID_BYTES).toString('base64url');
}

const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether `value` could be a task id at all; anything else is refused before any lookup. */
export function isWellFormedTaskId(value: unknown): value is string {
  return typeof value === 'string' && TASK_ID_PATTERN.test(value);
}
