import {
  isTerminal,
  outstandingInputs,
  TaskNotFoundError,
  toDetailedTask,
  type DetailedTask,
  type TaskOwner,
  type TaskRecord,
  type TaskRef,
  type TaskRuntime,
  type Unsubscribe,
} from '@mcp-tasks/core';

/** How long a follower waits before re-reading after a failed read. */
const RETRY_MS = 1_000;

/** What a {@link TaskFollower} reports to its stream. */
export interface TaskFollowerEvents {
  /** A new state of the task, exactly as `tasks/get` would return it now (without `resultType`). */
  onState(task: DetailedTask): void;
  /** The follower stopped: the task is terminal (its last state was sent) or gone (expired). */
  onEnd(): void;
  onError(error: Error): void;
}

/**
 * Follows one task for one listen stream. Each ping of the store (a change on any node) re-reads
 * the task and reports its state when status, `lastUpdatedAt` or the outstanding input keys
 * changed; re-reads are serialised, so states are reported in order and never twice. Pings that
 * arrive during a read coalesce into one more read. After the terminal state it unfollows.
 */
export class TaskFollower {
  readonly ref: TaskRef;
  readonly #runtime: TaskRuntime;
  readonly #events: TaskFollowerEvents;
  #unfollow: Unsubscribe | undefined;
  #started = false;
  /** A change was announced since the last read (or since the seed was read). */
  #dirty = false;
  /** The record read when following began, reported by the first drain instead of a read. */
  #seed: TaskRecord | undefined;
  #running: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #lastKey: string | undefined;
  #ended = false;

  private constructor(runtime: TaskRuntime, ref: TaskRef, events: TaskFollowerEvents) {
    this.#runtime = runtime;
    this.ref = ref;
    this.#events = events;
  }

  /**
   * Follows many of one owner's tasks with one read of them all (a listen's ids): resolves a
   * follower and its record for each visible task; the others are not followed. The first
   * report of each is the record that read returned.
   */
  static async followMany(
    runtime: TaskRuntime,
    owner: TaskOwner,
    taskIds: readonly string[],
    eventsOf: (taskId: string) => TaskFollowerEvents,
  ): Promise<{ follower: TaskFollower; record: TaskRecord }[]> {
    const followers = new Map<string, TaskFollower>();
    // Each is seeded by the read below; a ping while it is under way still asks for one more.
    for (const taskId of taskIds) followers.set(taskId, new TaskFollower(runtime, { taskId, owner }, eventsOf(taskId)));
    const followed = await runtime.followMany(owner, taskIds, (taskId) => followers.get(taskId)?.ping());
    return followed.map(({ record, unfollow }) => {
      const follower = followers.get(record.taskId) as TaskFollower;
      follower.#unfollow = unfollow;
      follower.#seed = record;
      return { follower, record };
    });
  }

  /** Whether the store subscription is still held. */
  get following(): boolean {
    return this.#unfollow !== undefined;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Starts reporting: first the record read when following began, then a re-read per change. */
  start(): void {
    this.#started = true;
    this.#kick();
  }

  /** The store saw a change (or may have): re-read. */
  ping(): void {
    if (this.#ended) return;
    this.#dirty = true;
    this.#kick();
  }

  #kick(): void {
    if (this.#started && !this.#running && !this.#ended) this.#running = this.#drain().finally(() => (this.#running = undefined));
  }

  /** One more read now, and resolves once every pending read is done (used before a graceful end). */
  async flush(): Promise<void> {
    if (!this.#started || this.#ended) return;
    this.ping();
    while (this.#running) await this.#running;
  }

  /** Unfollows; nothing is reported afterwards. Idempotent. */
  stop(): void {
    this.#ended = true;
    if (this.#retry) clearTimeout(this.#retry);
    const unfollow = this.#unfollow;
    this.#unfollow = undefined;
    unfollow?.();
  }

  async #drain(): Promise<void> {
    while ((this.#dirty || this.#seed) && !this.#ended) {
      let record: TaskRecord;
      try {
        if (this.#seed) {
          record = this.#seed;
          this.#seed = undefined;
        } else {
          this.#dirty = false;
          record = await this.#runtime.find(this.ref);
        }
      } catch (error) {
        if (this.#ended) return;
        if (error instanceof TaskNotFoundError) {
          // Expired (or swept) while followed: tasks/get would not find it either; nothing to send.
          this.stop();
          this.#events.onEnd();
          return;
        }
        this.#events.onError(error instanceof Error ? error : new Error(String(error)));
        this.#retry = setTimeout(() => this.ping(), RETRY_MS);
        this.#retry.unref();
        return;
      }
      if (this.#ended) return;
      const key = stateKey(record);
      if (key !== this.#lastKey) {
        this.#lastKey = key;
        this.#events.onState(toDetailedTask(record));
      }
      if (isTerminal(record.status)) {
        this.stop();
        this.#events.onEnd();
        return;
      }
    }
  }
}

/** What makes a state new: status, lastUpdatedAt and the outstanding input keys. */
function stateKey(record: TaskRecord): string {
  return JSON.stringify([record.status, record.lastUpdatedAt.getTime(), Object.keys(outstandingInputs(record)).sort()]);
}
