import { QuotaExceededError } from './quota-exceeded-error.js';

/** Which setting bounds a pool: an authenticated owner's, or the one all callers without a subject share. */
const SETTING = { owner: 'maxStoredBytesPerOwner', shared: 'maxStoredBytesWithoutSubject' } as const;

/**
 * A new task would make its pool keep more than its bound of bytes until its tasks expire
 * (`maxStoredBytesPerOwner`, or `maxStoredBytesWithoutSubject` for callers without an
 * authenticated subject). A kind of {@link QuotaExceededError}, handled as one: an optional task
 * tool runs inline instead, a required one is refused with this error (-32600).
 */
export class StoredBytesExceededError extends QuotaExceededError {
  readonly pool: 'owner' | 'shared';
  /** Bytes the pool keeps now. */
  readonly keptBytes: number;
  /** When the earliest of the pool's tasks expire and their bytes free up (ms from now), when known. */
  readonly freesInMs: number | undefined;

  constructor(pool: 'owner' | 'shared', limit: number, keptBytes: number, freesInMs: number | undefined) {
    const setting = SETTING[pool];
    const who = pool === 'owner' ? "this owner's tasks keep" : 'the tasks of callers without an authenticated subject keep';
    const frees = freesInMs === undefined ? 'room frees as they expire' : `room frees as they expire, the first in about ${Math.max(1, Math.ceil(freesInMs / 1000))} s`;
    super(
      limit,
      `Too much stored: ${who} ${formatBytes(keptBytes)} until they expire, at most ${formatBytes(limit)} (${setting}); ${frees}`,
      { limit: setting, maxBytes: limit, keptBytes, ...(freesInMs === undefined ? {} : { retryAfterMs: freesInMs }) },
    );
    this.pool = pool;
    this.keptBytes = keptBytes;
    this.freesInMs = freesInMs;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [unit, size] = bytes < 1024 ** 2 ? ['KiB', 1024] : bytes < 1024 ** 3 ? ['MiB', 1024 ** 2] : ['GiB', 1024 ** 3];
  return `${(bytes / size).toFixed(1)} ${unit}`;
}
