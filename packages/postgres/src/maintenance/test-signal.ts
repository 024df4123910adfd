/**
 * An event a service announces so tests can wait for it instead of sleeping (River's test
 * signals). Signals are queued until taken; a service without a waiting test pays one array push.
 */
export class TestSignal<T = void> {
  readonly #queued: T[] = [];
  readonly #waiters: ((value: T) => void)[] = [];

  /** Announces the event. */
  signal(value: T): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(value);
    else if (this.#queued.length < 1_000) this.#queued.push(value);
  }

  /** The next event (an earlier, untaken one first); rejects after `timeoutMs`. */
  waitOnce(timeoutMs = 10_000): Promise<T> {
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
