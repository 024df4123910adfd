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
 * Joins reads into one statement while reads are under way. Polling clients are the hot path:
 * under load many `tasks/get` arrive in the same turn of the event loop, and each statement
 * costs a round trip, a protocol exchange on the node and an execution on the server whatever it
 * reads. So a read that finds no read statement in flight goes at once (alone it waits for
 * nothing, and its round trip overlaps the rest of the turn's work), and the reads that arrive
 * while one is in flight go together at the end of the turn (`setImmediate`: after the turn's
 * I/O callbacks, never a timer).
 */
export class ReadBatcher {
  #waiting: Waiting[] = [];
  #scheduled = false;
  /** Read statements sent and not yet answered. */
  #inFlight = 0;

  constructor(readonly statements: ReadStatements) {}

  read(ref: TaskRef): Promise<TaskSnapshot | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = { ref, resolve, reject };
      if (this.#inFlight === 0 && this.#waiting.length === 0) {
        void this.#run([waiting]);
        return;
      }
      this.#waiting.push(waiting);
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
    this.#inFlight += 1;
    try {
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
    } finally {
      this.#inFlight -= 1;
    }
  }
}
