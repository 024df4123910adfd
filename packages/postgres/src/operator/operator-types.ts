import type { TaskRecord, TaskStatus } from '@mcp-tasks/core';

/** Which tasks `tasks list` shows; every field narrows, none given: all of them. */
export interface OperatorTaskFilter {
  readonly status?: TaskStatus;
  readonly tool?: string;
  /** A process (`<name>/<instance id>`), or a name (`NODE_ID`): the tasks of every process of that name. */
  readonly nodeId?: string;
  /** The owner's subject (the token's `sub`, or the host's scope without authorization). */
  readonly ownerSubject?: string;
  /** Only tasks created at least this long ago. */
  readonly olderThanMs?: number;
  /** At most this many, newest first (default 50). */
  readonly limit?: number;
  /**
   * The next page: only tasks listed after this one (the last id of the previous page). A task
   * swept since ends the listing.
   */
  readonly after?: string;
}

/** One line of `tasks list`: what an operator needs to spot a stuck task, nothing of its data. */
export interface OperatorTaskSummary {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly tool: string;
  readonly ownerSubject: string;
  readonly nodeId: string | null;
  readonly statusMessage: string | null;
  readonly createdAt: Date;
  readonly lastUpdatedAt: Date;
  /** Past its TTL: the owner can no longer read it; the sweeper deletes it. */
  readonly expired: boolean;
  /** Completed with a tool error (`isError: true` in its result): the tool ran and reported a failure. */
  readonly toolError: boolean;
}

/** A task's whole row for `tasks show`, whoever owns it. */
export interface OperatorTaskDetail extends TaskRecord {
  readonly expired: boolean;
}

/** One step of a task's journal (`ctx.step`), for `show` and the console. */
export interface OperatorTaskStep {
  readonly name: string;
  /** How many times its work started: more than 1 means it was redone after a lost run. */
  readonly starts: number;
  readonly done: boolean;
}

/** The end of a task's journal: its last steps, and how many there are in all. */
export interface OperatorTaskSteps {
  readonly total: number;
  readonly steps: readonly OperatorTaskStep[];
}

/** What an operator cancel did: the row after it, and whether this cancel changed it. */
export interface OperatorCancelResult {
  readonly task: OperatorTaskDetail;
  /** False when the task was terminal (or expired) already: nothing changed. */
  readonly cancelled: boolean;
}

/** One node of `nodes`, by its lease row. */
export interface OperatorNodeSummary {
  /** The process: `<name>/<instance id>` (an earlier release's node: its name alone). */
  readonly nodeId: string;
  /** The configured name (`NODE_ID`), shared by a process and its successors; null for an earlier release's node. */
  readonly name: string | null;
  readonly startedAt: Date;
  readonly renewedAt: Date;
  readonly leaseExpiresAt: Date;
  /** Milliseconds since the node last renewed its lease, by the database clock. */
  readonly leaseAgeMs: number;
  readonly expired: boolean;
  /** Its live tasks (working or input_required). */
  readonly running: number;
  /**
   * Whether its LISTEN works, as of its last renewal: false when it relies on polling alone (a
   * pooler without a direct connection string); null when not known (not yet, or an earlier release).
   */
  readonly listening: boolean | null;
}

/** The status message an operator cancel leaves on the task, so its owner sees who stopped it. */
export const OPERATOR_CANCEL_MESSAGE = 'Cancelled by an operator';
