/** Options of {@link OwnerTaskBudget}. */
export interface OwnerTaskBudgetOptions {
  /** The poll interval the node gives its tasks (`pollIntervalMs`). */
  readonly pollIntervalMs: number;
  /** Most tasks one owner can hold live (the quota, `maxPerPrincipal`): no owner's budget counts more. */
  readonly maxTasksPerOwner: number;
  /** Reads per task per poll interval an owner is given. Default 2. */
  readonly readsPerTaskPerInterval?: number;
  /** Owners whose tasks are remembered; past it the least recently seen is forgotten (back to the base rate). Default 2 000. */
  readonly maxOwners?: number;
  /** The clock, in milliseconds (tests). Default `performance.now`. */
  readonly now?: () => number;
}

/** More tasks per owner than this are never counted, whatever the quota (an unbounded quota included). */
const MOST_TASKS_COUNTED = 1_000;

/**
 * An owner's sustained rate follows the tasks it holds: each task it read in the last two poll
 * intervals earns `readsPerTaskPerInterval` reads per interval, so an owner polling its 100 tasks
 * at the interval they were given fits in its budget whatever the base rate. The tasks are the
 * ones its requests named; naming tasks it does not have earns no more than the quota's worth,
 * the most any owner can legitimately hold, so what a liar gains is bounded by what an honest owner
 * with a full quota has. Bounded in memory: per owner by that count, owners by `maxOwners`.
 */
export class OwnerTaskBudget {
  readonly #windowMs: number;
  readonly #perTaskPerSecond: number;
  readonly #maxTasks: number;
  readonly #maxOwners: number;
  readonly #now: () => number;
  /** Per owner, task id → when last named; each Map's order is the order of last naming. */
  readonly #owners = new Map<string, Map<string, number>>();

  constructor(options: OwnerTaskBudgetOptions) {
    this.#windowMs = 2 * options.pollIntervalMs;
    this.#perTaskPerSecond = ((options.readsPerTaskPerInterval ?? 2) * 1000) / options.pollIntervalMs;
    this.#maxTasks = Math.min(MOST_TASKS_COUNTED, options.maxTasksPerOwner);
    this.#maxOwners = options.maxOwners ?? 2_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Notes that `ownerKey` named `taskId` (when it did), and answers its sustained rate in requests per second (0 with no task). */
  rate(ownerKey: string, taskId: string | undefined): number {
    const now = this.#now();
    let tasks = this.#owners.get(ownerKey);
    if (tasks) this.#owners.delete(ownerKey);
    else if (taskId === undefined) return 0;
    else {
      tasks = new Map();
      if (this.#owners.size >= this.#maxOwners) this.#owners.delete(this.#owners.keys().next().value as string);
    }
    this.#owners.set(ownerKey, tasks);
    if (taskId !== undefined) {
      tasks.delete(taskId);
      tasks.set(taskId, now);
      if (tasks.size > this.#maxTasks) tasks.delete(tasks.keys().next().value as string);
    }
    for (const [id, at] of tasks) {
      if (now - at <= this.#windowMs) break;
      tasks.delete(id);
    }
    return tasks.size * this.#perTaskPerSecond;
  }
}
