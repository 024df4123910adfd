import { abortableSleep } from './abortable-sleep.js';
import { TransportError } from './json-rpc-types.js';

/** Requests that may be sent again whatever became of the first: they read, or change nothing twice. */
const IDEMPOTENT = new Set(['tasks/get', 'tasks/cancel', 'tasks/result', 'tools/list']);
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/**
 * Retries with backoff (250 ms doubling to 5 s) of a task's requests while the server is out of
 * reach: the task lives in the server's database, not in the connection, so a node restarting
 * or a balancer between nodes is waited out rather than the call given up. An idempotent request
 * is sent again after any connection failure or a 502/503/504; any other (tasks/update) only when
 * the connection was refused, so it never reached the server. Gives up after `budgetMs` without
 * an answer.
 */
export class ConnectionRetry {
  #failingSince: number | undefined;

  constructor(
    private readonly budgetMs: number,
    private readonly say: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  async run<T>(method: string, signal: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const answer = await send();
        if (this.#failingSince !== undefined) this.say(`Reached the server again; following the task.`);
        this.#failingSince = undefined;
        return answer;
      } catch (error) {
        if (!this.#retries(method, error)) throw error;
        const at = this.now();
        this.#failingSince ??= at;
        if (at - this.#failingSince >= this.budgetMs) throw new TransportError(`${(error as Error).message} (for ${Math.round((at - this.#failingSince) / 1000)} s; gave up)`);
        const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt, 10));
        if (attempt === 0 || delay === MAX_DELAY_MS) this.say(`${(error as Error).message}; retrying ${method} in ${(delay / 1000).toFixed(delay < 1000 ? 2 : 0)} s (the task lives on in the server's database)`);
        await abortableSleep(delay, signal ?? new AbortController().signal);
      }
    }
  }

  #retries(method: string, error: unknown): boolean {
    if (!(error instanceof TransportError) || error.reach === undefined) return false;
    return error.reach === 'refused' || IDEMPOTENT.has(method);
  }
}
