/**
 * A node's run capacity (`maxConcurrentRuns`): the runs it holds plus the slots reserved for runs
 * about to start (a task being committed to run here, a claim in flight), so that concurrent
 * starts and claims cannot overshoot it.
 */
export class RunSlots {
  readonly capacity: number;
  readonly #running: () => number;
  #reserved = 0;
  /** Of the reserved slots, those held by a claim in flight. */
  #claiming = 0;
  #claimSettled: Array<() => void> = [];

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

  /** Reserves a slot for a claim's query in flight, until {@link unreserveClaim}. */
  reserveForClaim(): void {
    this.#reserved += 1;
    this.#claiming += 1;
  }

  /** The claim answered (its run registered, or it found nothing): a start waiting on it goes on. */
  unreserveClaim(): void {
    this.#reserved -= 1;
    this.#claiming -= 1;
    const waiting = this.#claimSettled;
    this.#claimSettled = [];
    for (const resume of waiting) resume();
  }

  /** Whether the node is full only because claims are in flight: what a start may wait out. */
  get fullOfClaims(): boolean {
    return this.#claiming > 0 && this.full && this.#running() + this.#reserved - this.#claiming < this.capacity;
  }

  /** Resolves when a claim in flight answers. */
  claimSettled(): Promise<void> {
    return new Promise((resolve) => this.#claimSettled.push(resolve));
  }
}
