/**
 * Tokens of an owner's rate a `subscriptions/listen` takes, before the ids it names. A listen is
 * the most expensive request a node serves: it opens a stream, reads every task it names and
 * follows each until it ends; in bench scenario 10 one cost the node about five `tasks/get`s of CPU
 * and as many of allocation. A client that behaves opens a listen and keeps it, so a price paid at
 * the open costs it nothing it would notice; a loop that opens listens pays it every time.
 */
export const LISTEN_BASE_COST = 5;

/** A listen's ids per further token: naming 100 tasks costs 10 more. */
export const LISTEN_IDS_PER_TOKEN = 10;

/**
 * What a request costs an owner's rate, in tokens (a `tasks/get` costs 1): a listen costs what it
 * makes the node do ({@link LISTEN_BASE_COST} and a token per {@link LISTEN_IDS_PER_TOKEN} ids), so
 * an owner's rate bounds the work it can ask for, not only its number of requests.
 */
export function requestCost(method: string, params: unknown): number {
  if (method !== 'subscriptions/listen') return 1;
  const notifications = typeof params === 'object' && params !== null ? (params as { notifications?: unknown }).notifications : undefined;
  const taskIds = typeof notifications === 'object' && notifications !== null ? (notifications as { taskIds?: unknown }).taskIds : undefined;
  return LISTEN_BASE_COST + (Array.isArray(taskIds) ? Math.ceil(taskIds.length / LISTEN_IDS_PER_TOKEN) : 0);
}
