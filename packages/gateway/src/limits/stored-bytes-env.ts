/** What `MCP_TASKS_MAX_STORED_BYTES` sets: the runtime's two stored-bytes bounds (`Infinity`: off). */
export interface StoredBytesBounds {
  readonly maxStoredBytesPerOwner?: number;
  readonly maxStoredBytesWithoutSubject?: number;
}

const UNITS: Record<string, number> = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };
const NAME = 'MCP_TASKS_MAX_STORED_BYTES';

/**
 * `MCP_TASKS_MAX_STORED_BYTES`: `perOwner[,withoutSubject]`, each a size (`268435456`, `256MiB`,
 * `4GiB`) or `off`; `off` alone turns both off; empty: the library's defaults. What an
 * authenticated owner's tasks may keep until they expire, then what the tasks of every caller
 * without an authenticated subject may keep together.
 */
export function storedBytesFromEnv(raw: string | undefined): StoredBytesBounds | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() === 'off') return { maxStoredBytesPerOwner: Infinity, maxStoredBytesWithoutSubject: Infinity };
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 2) throw new Error(`${NAME} must be "perOwner[,withoutSubject]", got ${JSON.stringify(raw)}`);
  const [perOwner, withoutSubject] = parts.map(size);
  return { maxStoredBytesPerOwner: perOwner!, ...(withoutSubject === undefined ? {} : { maxStoredBytesWithoutSubject: withoutSubject }) };
}

function size(part: string): number {
  if (part === 'off') return Infinity;
  const match = /^(\d+)\s*(B|KiB|MiB|GiB|TiB)?$/.exec(part);
  const value = match ? Number(match[1]) * UNITS[match[2] ?? '']! : NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${NAME} takes sizes such as 268435456, 256MiB or 4GiB, or off; got ${JSON.stringify(part)}`);
  }
  return value;
}
