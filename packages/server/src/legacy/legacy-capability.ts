/**
 * `capabilities.tasks` of a 2025-11-25 `initialize` result: `tools/call` may be task-augmented,
 * `tasks/cancel` is served, and `tasks/list` only when `list` (see {@link ListTasksPolicy}).
 */
export function legacyTasksCapability(list: boolean) {
  return { ...(list ? { list: {} } : {}), cancel: {}, requests: { tools: { call: {} } } };
}

/**
 * When 2025-11-25 `tasks/list` is advertised and served:
 * - `'authorized'` (the default): to requests that carry verified auth info. Without
 *   authorization every caller is the one host owner, so a list would hand every task id to
 *   anyone who asks (the spec asks servers that cannot identify requestors not to declare it).
 * - `'always'`: to every request (a host whose `resolveOwner` binds owners some other way).
 * - `'never'`.
 */
export type ListTasksPolicy = 'authorized' | 'always' | 'never';

/** Whether a request with (or without) auth info gets `tasks/list`. */
export function servesTaskList(policy: ListTasksPolicy, authorized: boolean): boolean {
  return policy === 'always' || (policy === 'authorized' && authorized);
}
