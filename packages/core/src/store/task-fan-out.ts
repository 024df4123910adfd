import type { TaskRecord } from '../task/task-record.js';
import type { FollowedTask } from './task-events.js';
import type { TaskSignal, Unsubscribe } from './task-store.js';

/**
 * The listeners of one process, by task: watchers (runs waiting for cancels and answers) and
 * followers (streams forwarding changes). A node's source of events (a LISTEN connection, or the
 * memory store's own writes) delivers into it; a listener that throws is reported, not fatal.
 */
export class TaskFanOut {
  readonly #watchers: Listeners<(signal: TaskSignal) => void> = new Map();
  readonly #followers: Listeners<() => void> = new Map();
  readonly #onListenerError: (error: unknown, taskId: string) => void;

  constructor(onListenerError: (error: unknown, taskId: string) => void) {
    this.#onListenerError = onListenerError;
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe {
    return subscribe(this.#watchers, taskId, listener);
  }

  follow(taskId: string, listener: () => void): Unsubscribe {
    return subscribe(this.#followers, taskId, listener);
  }

  /**
   * Follows many tasks with one read: the listeners are in place before `read` runs, so no change
   * after it is missed; the tasks `read` does not return (not visible) are unfollowed.
   */
  async followMany(taskIds: readonly string[], listener: (taskId: string) => void, read: () => Promise<readonly TaskRecord[]>): Promise<FollowedTask[]> {
    const unfollows = new Map<string, Unsubscribe>();
    for (const taskId of new Set(taskIds)) unfollows.set(taskId, this.follow(taskId, () => listener(taskId)));
    let records: readonly TaskRecord[];
    try {
      records = await read();
    } catch (error) {
      for (const unfollow of unfollows.values()) unfollow();
      throw error;
    }
    const followed: FollowedTask[] = [];
    for (const record of records) {
      const unfollow = unfollows.get(record.taskId);
      if (!unfollow) continue;
      unfollows.delete(record.taskId);
      followed.push({ record, unfollow });
    }
    for (const unfollow of unfollows.values()) unfollow();
    return followed;
  }

  /** Tells the watchers of `taskId`. */
  signal(taskId: string, signal: TaskSignal): void {
    for (const listener of listenersOf(this.#watchers, taskId)) this.#call(taskId, () => listener(signal));
  }

  /** Tells the followers of `taskId` that it changed. */
  changed(taskId: string): void {
    for (const listener of listenersOf(this.#followers, taskId)) this.#call(taskId, listener);
  }

  /** Whether anyone here watches or follows `taskId` (a message about any other task is not this process's). */
  concerns(taskId: string): boolean {
    return this.#watchers.has(taskId) || this.#followers.has(taskId);
  }

  /** Ids of the tasks someone watches now. */
  watchedTaskIds(): string[] {
    return [...this.#watchers.keys()];
  }

  /** Ids of the tasks someone follows now. */
  followedTaskIds(): string[] {
    return [...this.#followers.keys()];
  }

  /** Drops every listener. */
  clear(): void {
    this.#watchers.clear();
    this.#followers.clear();
  }

  #call(taskId: string, deliver: () => void): void {
    try {
      deliver();
    } catch (error) {
      this.#onListenerError(error, taskId);
    }
  }
}

/**
 * Listeners by task id. A task has one listener most of the time (its run's watch), held as it
 * is: a Set per task would cost more than the listener, times every task a node holds.
 */
type Listeners<L> = Map<string, L | Set<L>>;

function subscribe<L extends (...args: never[]) => void>(registry: Listeners<L>, taskId: string, listener: L): Unsubscribe {
  const present = registry.get(taskId);
  if (present === undefined) registry.set(taskId, listener);
  else if (present instanceof Set) present.add(listener);
  else registry.set(taskId, new Set([present, listener]));
  let subscribed = true;
  return () => {
    if (!subscribed) return;
    subscribed = false;
    const current = registry.get(taskId);
    if (current === listener) registry.delete(taskId);
    else if (current instanceof Set) {
      current.delete(listener);
      if (current.size === 0) registry.delete(taskId);
    }
  };
}

/** A copy of the task's listeners, so a listener that unsubscribes while called changes nothing here. */
function listenersOf<L>(registry: Listeners<L>, taskId: string): readonly L[] {
  const present = registry.get(taskId);
  if (present === undefined) return [];
  return present instanceof Set ? [...present] : [present];
}
