/**
 * An event a service announces so tests can wait for it instead of sleeping (River's test
 * signals). Off until a test turns it on (`enable`, or its first `waitOnce`): in production
 * nobody waits, and an announcement costs one branch and queues nothing.
 */
export class TestSignal<T = void> {
  readonly #queued: T[] = [];
  readonly #waiters: ((value: T) => void)[] = [];
  #enabled = false;

  /** Starts keeping events, so one announced before a test waits is not missed. */
  enable(): void {
    this.#enabled = true;
  }

  /** Announces the event. */
  signal(value: T): void {
    if (!this.#enabled) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter(value);
    else if (this.#queued.length < 1_000) this.#queued.push(value);
  }

  /** The next event (an earlier, untaken one first); rejects after `timeoutMs`. */
  waitOnce(timeoutMs = 10_000): Promise<T> {
    this.#enabled = true;
    if (this.#queued.length > 0) return Promise.resolve(this.#queued.shift() as T);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(new Error(`test signal not received within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (value: T): void => {
        clearTimeout(timer);
        resolve(value);
      };
      this.#waiters.push(waiter);
    });
  }

  /** Forgets queued events (to wait for a fresh one). */
  clear(): void {
    this.#queued.length = 0;
  }
}

/** Turns on every signal of a service's `testSignals`. */
export function enableTestSignals(signals: object): void {
  for (const signal of Object.values(signals)) if (signal instanceof TestSignal) signal.enable();
}
