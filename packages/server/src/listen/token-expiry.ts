import type { AuthInfo } from '@modelcontextprotocol/server';

/** setTimeout's longest delay; a later expiry is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Calls `onExpire` once when the token of `authInfo` expires (`expiresAt`, seconds since the
 * epoch), so a stream opened with it does not outlive it. Returns the cancel; a token without an
 * expiry schedules nothing.
 */
export function atTokenExpiry(authInfo: AuthInfo | undefined, onExpire: () => void): () => void {
  const expiresAt = authInfo?.expiresAt;
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = expiresAt * 1000 - Date.now();
    if (left <= 0) {
      timer = undefined;
      onExpire();
      return;
    }
    timer = setTimeout(arm, Math.min(left, MAX_DELAY_MS));
    timer.unref();
  };
  arm();
  return () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
}
