import { JsonRpcError } from '../errors/json-rpc-error.js';

/**
 * Whether a store call failed for a reason that may pass (a dropped connection, a restarting
 * database) rather than because of what it was asked. The stores throw every refusal of the
 * request itself as a {@link JsonRpcError} (`InvalidTaskValueError` and the like); anything else
 * is the storage being away, which a waiting or running task treats as no news.
 */
export function isStoreOutage(error: unknown): boolean {
  return !(error instanceof JsonRpcError);
}

/** Backoff of a run's store reads while the store is away; the last delay repeats for as long as the run lives. */
const OUTAGE_RETRY_DELAYS_MS = [50, 250, 1_000, 2_000];

/** The pause before the next try after `failures` failed tries in a row (at least 1). */
export function outageRetryDelay(failures: number): number {
  return OUTAGE_RETRY_DELAYS_MS[Math.min(failures, OUTAGE_RETRY_DELAYS_MS.length) - 1]!;
}
