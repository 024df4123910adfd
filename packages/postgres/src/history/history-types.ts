import type { TaskStatus } from '@mcp-tasks/core';
import type { InputQuestion } from '../operator/input-question.js';

/**
 * What a history row records. The trigger of migration 0010 writes the first ones in the
 * transaction of the change; `operator` rows are an operator's actions; `upstream_cancel` is the
 * cancel a gateway owes the upstream of a proxied task (table `upstream_cancels`).
 */
export type TaskEventKind =
  | 'created'
  | 'claimed'
  | 'released'
  | 'input_requested'
  | 'input_answered'
  | 'working'
  | 'input_required'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'operator'
  | 'upstream_cancel';

/** The operator actions the history records. */
export type OperatorAction = 'cancel' | 'retry' | 'retry_of';

/** One change of a task, as `tasks show` and the console list it, oldest first. */
export interface TaskEvent {
  readonly at: Date;
  readonly kind: TaskEventKind;
  /** The task's status after the change. */
  readonly status: TaskStatus;
  /** The node that held the task after the change (null: none, queued or released). */
  readonly nodeId: string | null;
  readonly attempt: number;
  /** `input_*`: the input's key. */
  readonly key?: string;
  /** `input_requested`: the question as the form its owner is shown (absent once the task no longer has it). */
  readonly question?: InputQuestion;
  /** `released`: the node it was taken from, and why (the status message it left). */
  readonly from?: string;
  /** `released`, `cancelled`, `upstream_cancel`: the reason in words. */
  readonly message?: string;
  /** `failed`: the error of that attempt (code and message, never its data). */
  readonly error?: { readonly code: number; readonly message: string };
  /** `completed`: it completed with a tool error (`isError: true`). */
  readonly toolError?: boolean;
  /** `operator`: who acted (`console:<subject>`, `cli:<user>@<host>`), and what. */
  readonly actor?: string;
  readonly action?: OperatorAction;
  /** `operator`: the other task of a retry (the new one, or the one retried). */
  readonly relatedTaskId?: string;
  /** `operator` of a bulk action: the filter it matched by, as given. */
  readonly filter?: string;
  /** `upstream_cancel`: the upstream, the state of the owed cancel and the tries so far. */
  readonly upstream?: { readonly name: string; readonly state: string; readonly attempts: number; readonly lastError: string | null };
}

/** A task's history: its events, and how many the bounds coalesced away (the row still counts them). */
export interface TaskHistory {
  readonly events: readonly TaskEvent[];
  /** Input keys asked over the task's life; the history keeps the events of the newest 50. */
  readonly inputsAsked: number;
  /** The task's attempt; the history keeps the claims and releases of the newest 50. */
  readonly attempts: number;
}

/** Which live tasks a bulk cancel takes: the ids an operator confirmed. */
export interface OperatorBulkCancel {
  readonly taskIds: readonly string[];
  /** Who acts (recorded in each task's history). */
  readonly actor: string;
  /** The filter the ids were matched by, in words, for the record. */
  readonly filter?: string;
}

/** What a retry did. */
export type OperatorRetryResult =
  | { readonly retried: true; readonly newTaskId: string }
  | { readonly retried: false; readonly reason: string };
