import type { TaskRef, TaskSnapshot } from '@mcp-tasks/core';

/** Reads one task, or several in one statement (by position). */
export interface ReadStatements {
  one(ref: TaskRef): Promise<TaskSnapshot | undefined>;
  many(refs: readonly TaskRef[]): Promise<(TaskSnapshot | undefined)[]>;
}

interface Waiting {
  readonly ref: TaskRef;
  resolve(snapshot: TaskSnapshot | undefined): void;
  reject(error: unknown): void;
}

/** Reads of one batch at most: the statement's arrays stay small, and so does what one failure fails. */
export const MAX_READ_BATCH = 64;

/**
 * Joins the reads asked within one turn of the event loop into one statement. Polling clients
 * are the hot path: under load many `tasks/get` arrive in the same turn, and each statement costs
 * a round trip, a protocol exchange on the node and an execution on the server whatever it
 * reads. A read alone still goes out as the single-row statement, at the end of the turn
 * (`setImmediate`: after the turn's I/O callbacks, so nothing waits for a timer).
 */
export class ReadBatcher {
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(readonly statements: ReadStatements) {}

  read(ref: TaskRef): Promise<TaskSnapshot | undefined> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ ref, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (let start = 0; start < waiting.length; start += MAX_READ_BATCH) void this.#run(waiting.slice(start, start + MAX_READ_BATCH));
  }

  async #run(batch: readonly Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Waiting];
      await this.statements.one(only.ref).then(only.resolve, only.reject);
      return;
    }
    try {
      const snapshots = await this.statements.many(batch.map((waiting) => waiting.ref));
      batch.forEach((waiting, i) => waiting.resolve(snapshots[i]));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
