/** When a busy upstream gives no `Retry-After`: wait this long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;
/** A `Retry-After` beyond this is read as this: an upstream cannot park the proxy's work for hours. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** A `Retry-After` header (delay-seconds or an HTTP date) in ms from now; the default when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header === null || header.trim() === '') return DEFAULT_RETRY_AFTER_MS;
  const trimmed = header.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1_000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
