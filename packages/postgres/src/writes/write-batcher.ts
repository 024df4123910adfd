/** What one write of a batch came to: its value, or the error that fails only its own request. */
export type Settled<O> = { readonly value: O } | { readonly error: unknown };

/** Writes one item alone, or several in one statement (one commit), settled by position. */
export interface WriteStatements<I, O> {
  one(item: I): Promise<O>;
  many(items: readonly I[]): Promise<Settled<O>[]>;
  /** The row an item writes: two writes of one row never share a batch and keep their order. */
  key(item: I): string;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly key: string;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/** Writes of one batch at most: the statement's arrays stay small, and so does its lock set. */
export const MAX_WRITE_BATCH = 64;
/**
 * Batches of one kind in flight at most. Past it the writes that arrive wait for one to land and
 * go together: the bounded window that makes batches larger only when the database is the
 * bottleneck. It also leaves the rest of the pool to reads and the other writes.
 */
export const MAX_WRITES_IN_FLIGHT = 4;

/**
 * Group commit, modelled on the read batcher: a write that finds nothing of its kind in flight
 * goes at once, alone, in its own statement (an idle node waits for nothing); the writes that
 * arrive while some are in flight go together at the end of the turn (`setImmediate`, never a
 * timer), one statement and so one commit for all of them, and each request is answered from
 * that statement's result, that is after the commit that holds its row. A row the statement
 * refuses (quota, lost compare-and-set) settles only its own request. A batch the server rejects
 * as a whole (a value it cannot store, a deadlock) rolled back entirely, so each of its writes is
 * retried alone and only the one at fault fails; a batch whose connection broke may or may not
 * have committed, so its writes fail as a lone write would, and none is retried.
 */
export class WriteBatcher<I, O> {
  #waiting: Waiting<I, O>[] = [];
  #scheduled = false;
  #inFlight = 0;
  /** Rows written by batches in flight: a later write of one waits for them to land. */
  readonly #busy = new Map<string, number>();

  constructor(readonly statements: WriteStatements<I, O>) {}

  write(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const waiting = { item, key: this.statements.key(item), resolve, reject };
      if (this.#inFlight === 0 && this.#waiting.length === 0) {
        void this.#run([waiting]);
        return;
      }
      this.#waiting.push(waiting);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#waiting.length > 0 && this.#inFlight < MAX_WRITES_IN_FLIGHT) {
      const batch: Waiting<I, O>[] = [];
      const keys = new Set<string>();
      const rest: Waiting<I, O>[] = [];
      for (const waiting of this.#waiting) {
        // A row already in this batch or in one in flight: this write waits, behind it.
        if (batch.length >= MAX_WRITE_BATCH || keys.has(waiting.key) || this.#busy.has(waiting.key)) {
          rest.push(waiting);
          keys.add(waiting.key);
          continue;
        }
        keys.add(waiting.key);
        batch.push(waiting);
      }
      this.#waiting = rest;
      if (batch.length === 0) return; // every waiting write is behind one in flight: its landing flushes again
      void this.#run(batch);
    }
  }

  async #run(batch: readonly Waiting<I, O>[]): Promise<void> {
    this.#inFlight += 1;
    for (const waiting of batch) this.#busy.set(waiting.key, (this.#busy.get(waiting.key) ?? 0) + 1);
    try {
      if (batch.length === 1) {
        const [only] = batch as [Waiting<I, O>];
        await this.statements.one(only.item).then(only.resolve, only.reject);
        return;
      }
      let settled: Settled<O>[];
      try {
        settled = await this.statements.many(batch.map((waiting) => waiting.item));
      } catch (error) {
        if (!rolledBack(error)) {
          for (const waiting of batch) waiting.reject(error);
          return;
        }
        // Nothing of the batch was written: each write alone, in order, fails or commits by itself.
        for (const waiting of batch) await this.statements.one(waiting.item).then(waiting.resolve, waiting.reject);
        return;
      }
      batch.forEach((waiting, i) => {
        const outcome = settled[i];
        if (outcome === undefined) waiting.reject(new Error('the batched write returned no result for this row'));
        else if ('error' in outcome) waiting.reject(outcome.error);
        else waiting.resolve(outcome.value);
      });
    } finally {
      for (const waiting of batch) {
        const count = (this.#busy.get(waiting.key) ?? 1) - 1;
        if (count === 0) this.#busy.delete(waiting.key);
        else this.#busy.set(waiting.key, count);
      }
      this.#inFlight -= 1;
      if (this.#waiting.length > 0) this.#schedule();
    }
  }
}

/**
 * SQLSTATE classes of a statement the server refused and rolled back whole, for a reason one of
 * its rows may carry: a data exception (a NUL in text, a value out of range), an integrity
 * violation, a deadlock or serialization failure. A broken connection (no SQLSTATE, class 08, an
 * administrator's termination) leaves the commit unknown and is not among them.
 */
const ROW_FAULT_CLASSES = new Set(['22', '23', '40']);

function rolledBack(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && ROW_FAULT_CLASSES.has(code.slice(0, 2));
}
