import type { JsonObject } from '../json/json-value.js';
import type { TaskOwner } from '../task/task-owner.js';

/** `elicitation/create` params, as the client receives them (form or URL mode). */
export type ElicitParams = JsonObject & { message: string };

/** The client's answer to an elicitation; `action: "cancel"` also when the task was cancelled while waiting. */
export type ElicitResult = JsonObject & { action: 'accept' | 'decline' | 'cancel'; content?: JsonObject };

/** `sampling/createMessage` params. */
export type SampleParams = JsonObject & { messages: JsonObject[]; maxTokens: number };

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
  /** Asks the client through `elicitation/create`; resolves `{ action: "cancel" }` if the task is cancelled meanwhile. */
  elicit(key: string, params: ElicitParams): Promise<ElicitResult>;
  /** Asks the client through `sampling/createMessage`; rejects with `TaskCancelledError` if the task is cancelled meanwhile. */
  sample(key: string, params: SampleParams): Promise<SampleResult>;
  /** Asks the client through `roots/list`; rejects with `TaskCancelledError` if the task is cancelled meanwhile. */
  roots(key: string): Promise<RootsResult>;
}

