import type { ElicitParams, SampleParams } from '../input/input-params.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import type { TaskStep } from '../store/task-store.js';
import type { TaskOwner } from '../task/task-owner.js';

export type { ElicitParams, SampleParams } from '../input/input-params.js';

/** The client's answer to an elicitation; `action: "cancel"` also when the task was cancelled while waiting. */
export type ElicitResult = JsonObject & { action: 'accept' | 'decline' | 'cancel'; content?: JsonObject };

/** The client's sampling result. */
export type SampleResult = JsonObject & { role: 'assistant' | 'user'; content: JsonObject | JsonObject[]; model: string };

/** The client's roots. */
export type RootsResult = JsonObject & { roots: Array<JsonObject & { uri: string; name?: string }> };

/**
 * What a task tool's `execute` gets besides its arguments. Input methods take a key that must be
 * unique over the task's life: asking a key again returns its first answer, so a tool may replay
 * its steps safely.
 */
export interface TaskContext {
  /** The task's id. */
  readonly taskId: string;
  /** The task's owner. */
  readonly owner: TaskOwner;
  /** Aborted when the task is cancelled (on any node), expires, or the node gives up on it. */
  readonly signal: AbortSignal;
  /** Whether the task was cancelled (or otherwise ended) and the tool should stop. */
  cancelled(): boolean;
  /** Reports progress; sets the task's `statusMessage` (`message`, or "n/total"). No-op once cancelled. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * Asks the client through `elicitation/create`; resolves `{ action: "cancel" }` if the task is
   * cancelled meanwhile. Rejects, before anything is stored, with `InvalidInputRequestError`
   * (-32602) for params the protocol does not define (form mode needs `requestedSchema`) and with
   * `InputNotSupportedError` (-32021) when the request that created the task did not declare the
   * elicitation mode in its client capabilities. In a resumable task the wait gives the run slot
   * back: this run ends here (rejects with `TaskCancelledError`, `signal` fires), and the run that
   * a node starts once the answer comes gets the answer from this call (as do `sample`, `roots`).
   */
  elicit(key: string, params: ElicitParams): Promise<ElicitResult>;
  /**
   * Asks the client through `sampling/createMessage`; rejects with `TaskCancelledError` if the
   * task is cancelled meanwhile, and like {@link elicit} for invalid params or an undeclared
   * `sampling` (or `sampling.tools`) capability.
   */
  sample(key: string, params: SampleParams): Promise<SampleResult>;
  /**
   * Which run of the task this is: 1 for the first; a resumable task run again after its node was
   * lost (or handed it over) sees a higher number.
   */
  readonly attempt: number;
  /**
   * Runs `fn` once and journals its JSON result (`undefined` journals as `null`): on a later run of
   * the task the journaled result is returned and `fn` is not called. A step that was running when
   * its node was lost runs again (at-least-once); a finished one never does. Names are unique per
   * task. Rejects with `TaskCancelledError` when this run no longer holds the task.
   */
  step<T extends JsonValue | void>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** The task's journal: each step's name, how many times its work started, whether it finished. */
  journal(): Promise<readonly TaskStep[]>;
  /** Asks the client through `roots/list`; rejects with `TaskCancelledError` if the task is cancelled meanwhile, and with `InputNotSupportedError` without the `roots` capability. */
  roots(key: string): Promise<RootsResult>;
}

