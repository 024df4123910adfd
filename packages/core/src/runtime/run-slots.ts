/**
 * A node's run capacity (`maxConcurrentRuns`): the runs it holds plus the slots reserved for runs
 * about to start (a task being committed to run here, a claim in flight), so that concurrent
 * starts and claims cannot overshoot it.
 */
export class RunSlots {
  readonly capacity: number;
  readonly #running: () => number;
  #reserved = 0;

  constructor(capacity: number, running: () => number) {
    this.capacity = capacity;
    this.#running = running;
  }

  /** Whether the node has a limit at all (without one nothing ever waits for a slot). */
  get bounded(): boolean {
    return Number.isFinite(this.capacity);
  }

  /** Whether every slot is taken or reserved. */
  get full(): boolean {
    return this.#running() + this.#reserved >= this.capacity;
  }

  /** Reserves a slot until {@link unreserve} (the run it was for registered, or did not come). */
  reserve(): void {
    this.#reserved += 1;
  }

  unreserve(): void {
    this.#reserved -= 1;
  }
}
