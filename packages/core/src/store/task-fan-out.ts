import type { TaskRecord } from '../task/task-record.js';
import type { FollowedTask } from './task-events.js';
import type { TaskSignal, Unsubscribe } from './task-store.js';

/**
 * The listeners of one process, by task: watchers (runs waiting for cancels and answers) and
 * followers (streams forwarding changes). A node's source of events (a LISTEN connection, or the
 * memory store's own writes) delivers into it; a listener that throws is reported, not fatal.
 */
export class TaskFanOut {
  readonly #watchers = new Map<string, Set<(signal: TaskSignal) => void>>();
  readonly #followers = new Map<string, Set<() => void>>();
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
    for (const listener of [...(this.#watchers.get(taskId) ?? [])]) this.#call(taskId, () => listener(signal));
  }

  /** Tells the followers of `taskId` that it changed. */
  changed(taskId: string): void {
    for (const listener of [...(this.#followers.get(taskId) ?? [])]) this.#call(taskId, listener);
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

function subscribe<L>(registry: Map<string, Set<L>>, taskId: string, listener: L): Unsubscribe {
  let listeners = registry.get(taskId);
  if (!listeners) registry.set(taskId, (listeners = new Set()));
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && registry.get(taskId) === listeners) registry.delete(taskId);
  };
}
