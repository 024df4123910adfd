import type { TaskInput, TaskRecord } from '../task/task-record.js';
import type { TaskStatus } from '../task/task-status.js';

/**
 * The part of a task its lifecycle rules decide on. Both stores hand their row to the same pure
 * decisions (`decide-*.ts`), so "which transition is allowed" and "which answer counts" are
 * written once.
 */
export interface TaskState {
  readonly status: TaskStatus;
  /** Every input key asked over the task's life, answered or not. */
  readonly inputs: Readonly<Record<string, TaskInput>>;
  /** Who holds the run; `null` when no run is known (see {@link RunClaim}). */
  readonly claim: RunClaim | null;
}

/**
 * What a run holds its task by. Every write a run makes carries it, and a write whose claim no
 * longer matches the row is refused like a write to a terminal task: the node that runs the task,
 * and the attempt, which every claim increments, so a superseded run of the same task (a node
 * that was stopped past its lease and came back, even to the same node id) is fenced off.
 */
export interface RunClaim {
  /** The process that runs it: unique per process (a PostgreSQL node's is its name plus an instance id), so two processes never share a claim. */
  readonly nodeId: string;
  readonly attempt: number;
}

/** Whether `claim` still holds the task in `state`; a write without a claim is not fenced. */
export function claimHolds(state: Pick<TaskState, 'claim'>, claim: RunClaim | undefined): boolean {
  return claim === undefined || (state.claim?.nodeId === claim.nodeId && state.claim.attempt === claim.attempt);
}

/**
 * The input under `key`, if the task asked it. Own keys only: an inherited name such as
 * `constructor` is no key of any task.
 */
export function inputOf(state: Pick<TaskState, 'inputs'>, key: string): TaskInput | undefined {
  return Object.hasOwn(state.inputs, key) ? state.inputs[key] : undefined;
}

/** The keys asked and not yet answered, in the order they were asked. */
export function outstandingKeys(state: Pick<TaskState, 'inputs'>): string[] {
  return Object.keys(state.inputs).filter((key) => state.inputs[key]!.response === undefined);
}

/** The state of a stored task. */
export function stateOf(record: Pick<TaskRecord, 'status' | 'inputs' | 'nodeId' | 'attempt'>): TaskState {
  return { status: record.status, inputs: record.inputs, claim: record.nodeId === null ? null : { nodeId: record.nodeId, attempt: record.attempt } };
}
