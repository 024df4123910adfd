import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { JsonObject } from '../json/json-value.js';

/**
 * The member of a task's stored client capabilities that holds what the creating request
 * carried for its run ({@link TaskRunRequest.carried}). It lives in the same stored object (no
 * column of its own), under a name no protocol capability uses.
 */
export const CARRIED_CAPABILITY = 'io.github.mcp-tasks/carried';

/** What the runtime reads back from a task's stored client capabilities. */
export interface StoredRunInput {
  /** The capabilities the creating request declared; `undefined`: not known, nothing is checked. */
  readonly clientCapabilities?: ClientCapabilities;
  /** What the creating request carried for the run, if anything. */
  readonly carried?: JsonObject;
}

/**
 * The client capabilities to store for a task. A client's own declaration never carries
 * anything: a member named {@link CARRIED_CAPABILITY} in it is dropped, so no client can hand a
 * claimed run a value its server did not put there. Without `carried` and `retry` the stored
 * object is the declaration itself (or `null`), as before this member existed.
 *
 * `retry` is the tool's retry policy when it differs from the default a reader derives from the
 * row (`resumable`): whether an operator may run the task again as a new one (the operator's
 * retry reads it in SQL, as `…->'io.github.mcp-tasks/carried'->'retry'`).
 */
export function toStoredCapabilities(declared: ClientCapabilities | undefined, carried: JsonObject | undefined, retry?: boolean): ClientCapabilities | null {
  const own = declared === undefined ? undefined : withoutCarried(declared);
  if (carried === undefined && retry === undefined) return own ?? null;
  return {
    ...(own ?? {}),
    [CARRIED_CAPABILITY]: { ...(carried === undefined ? {} : { carried }), declared: own !== undefined, ...(retry === undefined ? {} : { retry }) },
  };
}

/** The declaration and the carried value of a stored task, as {@link toStoredCapabilities} wrote them. */
export function fromStoredCapabilities(stored: ClientCapabilities | null): StoredRunInput {
  if (stored === null) return {};
  const envelope = stored[CARRIED_CAPABILITY];
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return { clientCapabilities: stored };
  const { carried, declared } = envelope as { carried?: unknown; declared?: unknown };
  const own = withoutCarried(stored);
  return {
    ...(declared === false ? {} : { clientCapabilities: own }),
    ...(typeof carried === 'object' && carried !== null && !Array.isArray(carried) ? { carried: carried as JsonObject } : {}),
  };
}

function withoutCarried(capabilities: ClientCapabilities): ClientCapabilities {
  if (!(CARRIED_CAPABILITY in capabilities)) return capabilities;
  const { [CARRIED_CAPABILITY]: _dropped, ...own } = capabilities;
  return own;
}
