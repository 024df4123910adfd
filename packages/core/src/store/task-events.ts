import type { TaskOwner } from '../task/task-owner.js';
import type { TaskRecord } from '../task/task-record.js';
import type { TaskRef, TaskSignal, Unsubscribe } from './task-store.js';

/** The runs a node's runtime holds right now, as the node's rescuer asks about them. */
export interface RunRegistry {
  /** Whether a run on this node holds the task (it will write its outcome). */
  holds(taskId: string): boolean;
}

/**
 * How a runtime hears of changes made anywhere in the cluster: the cancels and answers for the
 * runs it holds, and the changes of the tasks it follows. Delivery is a hint, best effort: the
 * runtime re-reads the row before it acts, and its backstop poll covers what never arrives.
 */
export interface TaskEvents {
  /** Delivers cancels and answers for `taskId`, written through any node. */
  watch(taskId: string, listener: (signal: TaskSignal) => void): Unsubscribe;

  /**
   * Calls `listener` after every change of the task's status, status message or outstanding
   * input, written through any node, so a follower can re-read and forward it. Resolves once
   * following is in place: a read made after it cannot miss a later change. Calls may be
   * coalesced or repeated; followers re-read and compare. Resolves `undefined` when the task is
   * not found.
   */
  follow(ref: TaskRef, listener: () => void): Promise<Unsubscribe | undefined>;

  /**
   * {@link follow} for many of one owner's tasks at once, with one read of them all: `listener`
   * is called with the id of the task that changed. Resolves the visible tasks, each with the
   * record read once following was in place; the others are not followed.
   */
  followMany(owner: TaskOwner, taskIds: readonly string[], listener: (taskId: string) => void): Promise<FollowedTask[]>;

  /**
   * Calls `listener` when a task may have become claimable anywhere (queued, released), so a node
   * with a free run slot tries to claim. A hint: the claim decides; a backstop poll covers a lost one.
   */
  onClaimable?(listener: () => void): Unsubscribe;

  /**
   * Whether signals have proved they arrive right now (for PostgreSQL: the LISTEN connection
   * listens and passed its last check). The runtime's backstop poll slows down while this holds
   * and returns to `pollIntervalMs` as soon as it does not.
   */
  signalsProven?(): boolean;
}

/** A task {@link TaskEvents.followMany} follows: its record when following began, and how to stop. */
export interface FollowedTask {
  readonly record: TaskRecord;
  readonly unfollow: Unsubscribe;
}

/**
 * One node of a cluster as a runtime sees it: its identity (recorded on the tasks it runs, so the
 * cluster can tell when their runner is gone) and the events that reach it.
 */
export interface TaskNode extends TaskEvents {
  readonly nodeId: string;
  /**
   * Tells the node which tasks the runtime on it runs, for a node that rescues tasks no run holds
   * (`PostgresTaskNode` fails its own live tasks that no attached registry holds, so a finish that
   * could not be written never leaves a task live for its TTL). The runtime attaches at
   * construction and detaches on `close` and after `drain`.
   */
  attachRuns?(runs: RunRegistry): Unsubscribe;
  /** Stops the node's services, once the runtime settled its runs and before the store closes. */
  stop(): Promise<void>;
}
