import type {
  CreateOptions,
  InputAnswerResult,
  InputAsk,
  InputRequest,
  InputResponses,
  ListTasksOptions,
  TaskPage,
  NewTask,
  RunClaim,
  JsonValue,
  StepBegin,
  TaskControlState,
  TaskStep,
  StepsOptions,
  TaskEvents,
  TaskOutcome,
  TaskRecord,
  TaskSnapshot,
  TaskOwner,
  TaskRef,
  TaskStore,
} from '@mcp-tasks/core';

/** The store operations a {@link FlakyTaskStore} can make fail. */
export type FlakyOperation = 'get' | 'setStatusMessage' | 'requestInput' | 'readInput' | 'finish' | 'controlStates';

/**
 * A real store whose chosen operations fail on demand, as a dropped connection or a restarting
 * database makes them fail: a plain `Error`, nothing written. Everything else goes to `inner`.
 */
export class FlakyTaskStore implements TaskStore {
  readonly #failing = new Map<FlakyOperation, number>();
  /** How many calls of each operation failed so far. */
  readonly failures = new Map<FlakyOperation, number>();

  constructor(readonly inner: TaskStore) {}

  get events(): TaskEvents | undefined {
    return this.inner.events;
  }

  /** Makes the next `times` calls of `operation` fail (`Infinity`: until {@link heal}). */
  fail(operation: FlakyOperation, times = Infinity): void {
    this.#failing.set(operation, times);
  }

  /** Lets `operation` (default: every operation) succeed again. */
  heal(operation?: FlakyOperation): void {
    if (operation) this.#failing.delete(operation);
    else this.#failing.clear();
  }

  async #call<T>(operation: FlakyOperation, work: () => Promise<T>): Promise<T> {
    const left = this.#failing.get(operation) ?? 0;
    if (left > 0) {
      this.#failing.set(operation, left - 1);
      this.failures.set(operation, (this.failures.get(operation) ?? 0) + 1);
      throw new Error(`${operation} failed: the connection was lost`);
    }
    return work();
  }

  create(task: NewTask, options: CreateOptions): Promise<TaskRecord> {
    return this.inner.create(task, options);
  }
  get(ref: TaskRef): Promise<TaskRecord | undefined> {
    return this.#call('get', () => this.inner.get(ref));
  }
  /** A reader's read fails with `get`: both are the task's one read. */
  read(ref: TaskRef): Promise<TaskSnapshot | undefined> {
    return this.#call('get', () => this.inner.read(ref));
  }

  list(owner: TaskOwner, options?: ListTasksOptions): Promise<TaskPage> {
    return this.inner.list(owner, options);
  }
  setStatusMessage(ref: TaskRef, statusMessage: string, claim?: RunClaim): Promise<TaskRecord | undefined> {
    return this.#call('setStatusMessage', () => this.inner.setStatusMessage(ref, statusMessage, claim));
  }
  requestInput(ref: TaskRef, key: string, request: InputRequest, claim?: RunClaim): Promise<InputAsk> {
    return this.#call('requestInput', () => this.inner.requestInput(ref, key, request, claim));
  }
  readInput(ref: TaskRef, key: string): Promise<InputAsk> {
    return this.#call('readInput', () => this.inner.readInput(ref, key));
  }
  answerInput(ref: TaskRef, responses: InputResponses): Promise<InputAnswerResult | undefined> {
    return this.inner.answerInput(ref, responses);
  }
  cancel(ref: TaskRef): Promise<TaskRecord | undefined> {
    return this.inner.cancel(ref);
  }
  finish(ref: TaskRef, outcome: TaskOutcome, claim?: RunClaim): Promise<TaskRecord | undefined> {
    return this.#call('finish', () => this.inner.finish(ref, outcome, claim));
  }
  controlStates(refs: readonly TaskRef[]): Promise<Map<string, TaskControlState>> {
    return this.#call('controlStates', () => this.inner.controlStates(refs));
  }
  markFollowed(ref: TaskRef): Promise<boolean> {
    return this.inner.markFollowed(ref);
  }
  markFollowedMany(owner: TaskOwner, taskIds: readonly string[]): Promise<TaskRecord[]> {
    return this.inner.markFollowedMany(owner, taskIds);
  }
  claim(nodeId: string, tools: readonly string[]): Promise<TaskRecord | undefined> {
    return this.inner.claim(nodeId, tools);
  }

  release(ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined> {
    return this.inner.release(ref, claim);
  }

  park(ref: TaskRef, claim: RunClaim, key: string): Promise<boolean> {
    return this.inner.park(ref, claim, key);
  }

  beginStep(ref: TaskRef, claim: RunClaim, name: string): Promise<StepBegin> {
    return this.inner.beginStep(ref, claim, name);
  }

  finishStep(ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean> {
    return this.inner.finishStep(ref, claim, name, result);
  }

  steps(ref: TaskRef, options?: StepsOptions): Promise<readonly TaskStep[]> {
    return this.inner.steps(ref, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
