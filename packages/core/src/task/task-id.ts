import { randomBytes } from 'node:crypto';

/** Bytes of randomness in a task id: 144 bits, so ids cannot be guessed or enumerated. */
export const TASK_ID_BYTES = 18;

const HOUR_MS = 3_600_000;
/** The id's first 3 bytes: the hour its task expires in (hours since the epoch), or one of these. */
const NEVER_EXPIRES = 0;
const UNKNOWN_HOUR = 0xff_ff_ff;
const HOUR_BYTES = 3;
/** An id's length: base64url of the hour's 3 bytes (4 characters) then the random bytes' (24). */
const TASK_ID_LENGTH = ((HOUR_BYTES + TASK_ID_BYTES) / 3) * 4;

/**
 * A new task id: the hour its task expires in, then 144 bits from the crypto RNG, as 28 URL-safe
 * characters. The hour lets a store that keeps tasks by their expiry (the PostgreSQL store's
 * hourly partitions) look for a task in one place rather than in every one; it says nothing a
 * reader of the task does not see (its creation and TTL). `expiresAt` is the epoch milliseconds
 * the task expires at, `null` if it never does; without it the id names no hour.
 */
export function newTaskId(expiresAt?: number | null): string {
  const id = Buffer.allocUnsafe(HOUR_BYTES + TASK_ID_BYTES);
  id.writeUIntBE(hourOf(expiresAt), 0, HOUR_BYTES);
  randomBytes(TASK_ID_BYTES).copy(id, HOUR_BYTES);
  return id.toString('base64url');
}

function hourOf(expiresAt: number | null | undefined): number {
  if (expiresAt === null) return NEVER_EXPIRES;
  if (expiresAt === undefined || !Number.isFinite(expiresAt)) return UNKNOWN_HOUR;
  const hour = Math.floor(expiresAt / HOUR_MS);
  return hour > NEVER_EXPIRES && hour < UNKNOWN_HOUR ? hour : UNKNOWN_HOUR;
}

/** Where an id says its task expires: the hour's first millisecond, `null` for never, `undefined` when it does not say. */
export type TaskIdExpiry = { readonly hourStartsAt: number } | null | undefined;

/**
 * What `taskId` says of its task's expiry. Only a hint: ids minted before ids carried it (24
 * characters) and ids of other shapes say nothing, and a store must still find a task its hint
 * misplaces (a clock that differs from the database's across an hour's edge).
 */
export function expiryOfTaskId(taskId: string): TaskIdExpiry {
  if (taskId.length !== TASK_ID_LENGTH) return undefined;
  const bytes = Buffer.from(taskId.slice(0, (HOUR_BYTES / 3) * 4), 'base64url');
  if (bytes.length !== HOUR_BYTES) return undefined;
  const hour = bytes.readUIntBE(0, HOUR_BYTES);
  if (hour === NEVER_EXPIRES) return null;
  if (hour === UNKNOWN_HOUR) return undefined;
  return { hourStartsAt: hour * HOUR_MS };
}

const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether `value` could be a task id at all; anything else is refused before any lookup. */
export function isWellFormedTaskId(value: unknown): value is string {
  return typeof value === 'string' && TASK_ID_PATTERN.test(value);
}
