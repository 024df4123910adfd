import { InvalidTaskValueError } from '@mcp-tasks/core';

/**
 * SQLSTATEs PostgreSQL raises for text it cannot hold: a NUL character in a text column
 * (22021) or `\u0000` in jsonb (22P05). JSON and JavaScript strings allow both, so core's
 * validators pass them; they surface here as the same typed error as any other unstorable value.
 */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** Runs `operation`, turning PostgreSQL's "cannot store this text" into {@link InvalidTaskValueError}. */
export async function refuseUnstorableValue<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && UNSTORABLE_TEXT.has(code)) {
      throw new InvalidTaskValueError('a value holds a NUL character (\\u0000), which PostgreSQL cannot store');
    }
    throw error;
  }
}
