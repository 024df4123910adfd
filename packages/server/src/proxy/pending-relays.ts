import type { UpstreamTask } from './upstream-client.js';

/** What the creating request learned from the upstream, handed to the relay run of its reserved task. */
export type UpstreamHandOff = { readonly kind: 'task'; readonly task: UpstreamTask } | { readonly kind: 'none' };

interface Pending {
  readonly handOff: Promise<UpstreamHandOff>;
  settle(handOff: UpstreamHandOff): void;
  readonly journaled: Promise<boolean>;
  journal(kept: boolean): void;
}

/**
 * The meeting point, in one process, of a proxied `tools/call` and the relay run of the task it
 * reserved: the request hands over what the upstream answered, the run journals the upstream
 * task (its step) and says whether that write held, and only then is the CreateTaskResult sent.
 * Either side may arrive first.
 */
export class PendingRelays {
  readonly #pending = new Map<string, Pending>();

  #entry(taskId: string): Pending {
    let entry = this.#pending.get(taskId);
    if (!entry) {
      let settle!: (handOff: UpstreamHandOff) => void;
      let journal!: (kept: boolean) => void;
      const handOff = new Promise<UpstreamHandOff>((resolve) => (settle = resolve));
      const journaled = new Promise<boolean>((resolve) => (journal = resolve));
      entry = { handOff, settle, journaled, journal };
      this.#pending.set(taskId, entry);
    }
    return entry;
  }

  /** Whether a request in this process reserved the task and has not finished handing it over. */
  has(taskId: string): boolean {
    return this.#pending.has(taskId);
  }

  /** The request's side: what the upstream answered. */
  settle(taskId: string, handOff: UpstreamHandOff): void {
    const entry = this.#entry(taskId);
    entry.settle(handOff);
    // Nothing is journaled after `none`: the entry only waits for a run that may never come.
    if (handOff.kind === 'none') setTimeout(() => this.#pending.get(taskId) === entry && this.#pending.delete(taskId), 60_000).unref();
  }

  /** The run's side: waits up to `ms` for the request's hand-over (`none` past it). */
  async handOff(taskId: string, ms: number): Promise<UpstreamHandOff> {
    const handOff = await within(this.#entry(taskId).handOff, ms, { kind: 'none' } as UpstreamHandOff);
    if (handOff.kind === 'none') this.#pending.delete(taskId);
    return handOff;
  }

  /** The run's side: whether the upstream task was journaled on the reserved row. */
  journal(taskId: string, kept: boolean): void {
    this.#entry(taskId).journal(kept);
  }

  /** The request's side: waits up to `ms` for the journal write (`false` past it), and forgets the task. */
  async journaled(taskId: string, ms: number): Promise<boolean> {
    try {
      return await within(this.#entry(taskId).journaled, ms, false);
    } finally {
      this.#pending.delete(taskId);
    }
  }

}

async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
