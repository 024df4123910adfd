import { defaultLogger, logSafe } from '@mcp-tasks/core';
import type { UpstreamClient, UpstreamTask } from './upstream-client.js';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';
import type { UpstreamPacer } from './upstream-pacer.js';

/** What {@link UpstreamWatch.next} gives when its signal aborted before a state came. */
export const WATCH_ABORTED: unique symbol = Symbol('watch aborted');
export type WatchOutcome = UpstreamTask | undefined | typeof WATCH_ABORTED;

/** Options of {@link UpstreamWatch}. */
export interface UpstreamWatchOptions {
  /** Follow the relayed tasks on `subscriptions/listen` streams where the upstream offers them (else poll). Default true. */
  readonly listen?: boolean;
  /** Most task ids one listen asks for (this project's servers take 100). Default 100. */
  readonly maxTaskIdsPerListen?: number;
  /** Least time between two (re)opens of the streams, which a new relayed task causes. Default 1 000 ms. */
  readonly reopenMs?: number;
  /** How often a task followed on a stream is still polled, to see a task the upstream forgot (it sends no state then). Default 60 000 ms. */
  readonly backstopMs?: number;
}

interface Watched {
  readonly session: string | undefined;
  /** The last state a stream sent, and whether the relay has taken it. */
  latest: UpstreamTask | undefined;
  fresh: boolean;
  /** The open stream that agreed to follow it, if any. */
  streamedBy: OpenListen | undefined;
  started: boolean;
  wake: (() => void) | undefined;
}

interface OpenListen {
  readonly generation: number;
  readonly ids: ReadonlySet<string>;
  readonly abort: AbortController;
}

/** How long a relay's first state waits for a stream about to open before it polls. */
const FIRST_WAIT_MS = 2_500;
const DEBOUNCE_MS = 200;
/** Polls of one node in flight towards one upstream at once. */
const MAX_POLLS_IN_FLIGHT = 16;
/** How long an upstream that does not offer listen streams is polled before it is asked again. */
const UNSUPPORTED_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows every relayed task of one node towards one upstream. Where the upstream offers
 * `subscriptions/listen` (2026-07-28), one stream (per `maxTaskIdsPerListen` tasks) carries the
 * states of all of them, reopened with the new set (at most once per `reopenMs`) as relays come
 * and go, so a hundred relays cost the upstream one stream instead of a hundred polls a second.
 * Elsewhere, and for a task no stream agreed to follow, each relay polls at the upstream's
 * `pollIntervalMs`, spread (jittered, paced by the node's {@link UpstreamPacer}) and bounded (at
 * most {@link MAX_POLLS_IN_FLIGHT} in flight).
 */
export class UpstreamWatch {
  readonly #name: string;
  readonly #client: UpstreamClient;
  readonly #pacer: UpstreamPacer;
  readonly #listen: boolean;
  readonly #maxIds: number;
  readonly #reopenMs: number;
  readonly #backstopMs: number;
  readonly #watched = new Map<string, Watched>();
  readonly #streams = new Set<OpenListen>();
  #generation = 0;
  #lastOpen = 0;
  #timer: NodeJS.Timeout | undefined;
  #offUntil = 0;
  #failures = 0;
  #inFlight = 0;
  readonly #queue: Array<() => void> = [];
  #stopped = false;

  constructor(name: string, client: UpstreamClient, pacer: UpstreamPacer, options: UpstreamWatchOptions = {}) {
    this.#name = name;
    this.#client = client;
    this.#pacer = pacer;
    this.#listen = options.listen ?? true;
    this.#maxIds = options.maxTaskIdsPerListen ?? 100;
    this.#reopenMs = options.reopenMs ?? 1_000;
    this.#backstopMs = options.backstopMs ?? 60_000;
  }

  /** Open listen streams (a test's and a metric's view). */
  get streams(): number {
    return this.#streams.size;
  }

  /**
   * The task's next state: at once for a relay's first call (from a stream about to open, else a
   * poll), then the next state a stream sends, or a poll once `pollMs` passed (when no stream
   * follows it; `backstopMs` when one does). `undefined`: the upstream no longer knows the task.
   * Rejects as `getTask` does.
   */
  async next(taskId: string, session: string | undefined, pollMs: number, signal: AbortSignal): Promise<WatchOutcome> {
    const entry = this.#entry(taskId, session);
    if (signal.aborted) return WATCH_ABORTED;
    if (!entry.fresh) {
      const first = !entry.started;
      entry.started = true;
      const waitMs = entry.streamedBy ? this.#backstopMs : first ? (this.#listenable() ? FIRST_WAIT_MS : 0) : jittered(pollMs);
      const woken = waitMs > 0 ? await this.#wait(entry, waitMs, signal) : 'timeout';
      if (woken === 'aborted') return WATCH_ABORTED;
      // Woken without a state: the stream that followed it ended; wait the poll interval now.
      if (woken === 'woken' && !entry.fresh && !first) {
        const again = await this.#wait(entry, jittered(pollMs), signal);
        if (again === 'aborted') return WATCH_ABORTED;
      }
    }
    if (entry.fresh) {
      entry.fresh = false;
      return entry.latest;
    }
    return this.#poll(taskId, session, signal);
  }

  /** The relay stopped following the task (its stream keeps it until the next reopen). */
  forget(taskId: string): void {
    const entry = this.#watched.get(taskId);
    entry?.wake?.();
    this.#watched.delete(taskId);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const stream of this.#streams) stream.abort.abort();
  }

  #entry(taskId: string, session: string | undefined): Watched {
    let entry = this.#watched.get(taskId);
    if (!entry) {
      entry = { session, latest: undefined, fresh: false, streamedBy: undefined, started: false, wake: undefined };
      this.#watched.set(taskId, entry);
      this.#scheduleOpen();
    }
    return entry;
  }

  async #poll(taskId: string, session: string | undefined, signal: AbortSignal): Promise<WatchOutcome> {
    await this.#pacer.slot(signal);
    if (signal.aborted) return WATCH_ABORTED;
    if (this.#inFlight >= MAX_POLLS_IN_FLIGHT) await new Promise<void>((resolve) => this.#queue.push(resolve));
    this.#inFlight += 1;
    try {
      return await this.#client.getTask(taskId, session);
    } finally {
      this.#inFlight -= 1;
      this.#queue.shift()?.();
    }
  }

  #wait(entry: Watched, ms: number, signal: AbortSignal): Promise<'woken' | 'timeout' | 'aborted'> {
    return new Promise((resolve) => {
      const done = (how: 'woken' | 'timeout' | 'aborted') => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (entry.wake === wake) entry.wake = undefined;
        resolve(how);
      };
      const onAbort = () => done('aborted');
      const wake = () => done('woken');
      const timer = setTimeout(() => done('timeout'), ms);
      entry.wake = wake;
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #listenable(): boolean {
    return this.#listen && !this.#stopped && this.#client.listenTasks !== undefined && Date.now() >= this.#offUntil;
  }

  #scheduleOpen(): void {
    if (this.#timer || !this.#client.listenTasks || !this.#listen || this.#stopped) return;
    const now = Date.now();
    const delay = Math.max(DEBOUNCE_MS, this.#lastOpen + this.#reopenMs - now, this.#offUntil - now);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#open();
    }, delay);
    this.#timer.unref();
  }

  /** Opens streams for every followed task when some task is on none: the older streams close once the new ones are acknowledged. */
  #open(): void {
    if (!this.#listenable()) return this.#scheduleOpen();
    const covered = (taskId: string) => [...this.#streams].some((stream) => stream.ids.has(taskId));
    const ids = [...this.#watched.keys()];
    if (ids.every(covered)) return;
    this.#lastOpen = Date.now();
    const generation = ++this.#generation;
    for (let start = 0; start < ids.length; start += this.#maxIds) this.#start(generation, ids.slice(start, start + this.#maxIds));
  }

  #start(generation: number, ids: readonly string[]): void {
    const stream: OpenListen = { generation, ids: new Set(ids), abort: new AbortController() };
    this.#streams.add(stream);
    const listener = {
      onAcknowledged: (agreed: readonly string[]) => {
        this.#failures = 0;
        for (const taskId of agreed) {
          const entry = this.#watched.get(taskId);
          if (entry && stream.ids.has(taskId)) entry.streamedBy = stream;
        }
        // The streams this one replaces: their tasks are followed here now.
        for (const older of this.#streams) if (older.generation < generation) older.abort.abort();
      },
      onTask: (task: UpstreamTask) => {
        const entry = this.#watched.get(task.taskId);
        if (!entry) return;
        entry.latest = task;
        entry.fresh = true;
        entry.wake?.();
      },
    };
    this.#client
      .listenTasks!(ids, listener, stream.abort.signal)
      .catch((error: unknown) => this.#failed(error))
      .finally(() => {
        this.#streams.delete(stream);
        for (const entry of this.#watched.values()) {
          if (entry.streamedBy !== stream) continue;
          entry.streamedBy = undefined;
          entry.wake?.();
        }
        if (!this.#stopped && [...this.#watched.keys()].length > 0) this.#scheduleOpen();
      });
  }

  #failed(error: unknown): void {
    const now = Date.now();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof UpstreamError && error.busy) {
      this.#pacer.busy(error.retryAfterMs!);
      this.#offUntil = now + error.retryAfterMs!;
      return;
    }
    if (error instanceof UpstreamRpcError || (error instanceof UpstreamError && !error.retryable)) {
      // The upstream does not offer listen streams (or not ones the proxy can read): its relays poll.
      if (this.#offUntil < now) defaultLogger().info({ upstream: this.#name, err: logSafe(message) }, 'the upstream offers no task listen stream; its relays poll');
      this.#offUntil = now + UNSUPPORTED_MS;
      return;
    }
    this.#failures += 1;
    this.#offUntil = now + Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(10, this.#failures - 1));
  }
}

/**
 * A poll interval spread over +0–20 %, so relays that started together do not poll together;
 * never shorter than the upstream's `pollIntervalMs`, which a client must not poll faster than.
 */
function jittered(ms: number): number {
  return Math.ceil(ms * (1 + Math.random() * 0.2));
}
