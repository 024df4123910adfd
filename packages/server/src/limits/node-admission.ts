import { NodeSaturatedError } from '@mcp-tasks/core';
import { metrics, type Histogram, type MeterProvider, type ObservableCallback, type ObservableGauge } from '@opentelemetry/api';
import type { ReleaseSlot } from './listen-stream-caps.js';

/** Options of {@link NodeAdmission}. */
export interface AdmissionOptions {
  /**
   * Requests this node serves at once; more wait in the queue. Each needs the store, so this is
   * about what its connection pool serves (10 connections by default) without a queue of its own
   * growing: past it requests would wait in the pool's FIFO, where no owner is told from another.
   * Default 16.
   */
  readonly maxConcurrent?: number;
  /** Requests waiting for admission at once, all callers together; past it the node answers 503. Default 1 024. */
  readonly maxQueue?: number;
  /** Longest a request waits for admission; past it the node answers 503. Default 2 000 ms. */
  readonly maxWaitMs?: number;
  /** The clock, in milliseconds (tests). Default `performance.now`. */
  readonly now?: () => number;
}

export const DEFAULT_ADMISSION = { maxConcurrent: 16, maxQueue: 1_024, maxWaitMs: 2_000 } as const;

interface Waiter {
  readonly key: string;
  readonly since: number;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly admit: (release: ReleaseSlot) => void;
}

/**
 * The node's admission control in front of the store: at most `maxConcurrent` requests are served
 * at once, the rest wait in a bounded queue, and only a full queue or a wait past `maxWaitMs`
 * sheds a request (a {@link NodeSaturatedError}, HTTP 503). A node with spare capacity therefore
 * sheds nothing, whoever calls; a saturated one says so, distinct from an owner's 429.
 *
 * The queue is a FIFO per key (an authenticated owner; all unauthenticated callers share one key,
 * having nothing else to tell them apart by), served round-robin across keys, so the requests one
 * owner piles up never wait ahead of another owner's.
 *
 * The limit is fixed, not adaptive (as Netflix's gradient limiters or Envoy's adaptive concurrency
 * filter are): those find a fleet's limit from latency samples, and lower it while they measure or
 * under a flood, which would shed polite callers of a node that still has room. A node's
 * bottleneck here is its store pool, a number the operator knows.
 */
export class NodeAdmission {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  readonly maxWaitMs: number;
  readonly #now: () => number;
  /** Waiting requests by key; the Map's order is the round-robin order. */
  readonly #queues = new Map<string, Waiter[]>();
  readonly #waits: Histogram;
  readonly #depth: ObservableGauge;
  readonly #observeDepth: ObservableCallback = (result) => result.observe(this.#queued);
  #running = 0;
  #queued = 0;

  constructor(options: AdmissionOptions = {}, meterProvider?: MeterProvider) {
    this.maxConcurrent = count(options.maxConcurrent ?? DEFAULT_ADMISSION.maxConcurrent, 'maxConcurrent');
    this.maxQueue = count(options.maxQueue ?? DEFAULT_ADMISSION.maxQueue, 'maxQueue');
    this.maxWaitMs = count(options.maxWaitMs ?? DEFAULT_ADMISSION.maxWaitMs, 'maxWaitMs');
    this.#now = options.now ?? (() => performance.now());
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter('@mcp-tasks/server');
    this.#waits = meter.createHistogram('mcp_tasks.admission.wait_seconds', {
      description: 'Time requests waited for admission on this node (those admitted at once included)',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] },
    });
    this.#depth = meter.createObservableGauge('mcp_tasks.admission.queue_depth', { description: 'Requests waiting for admission on this node' });
    this.#depth.addCallback(this.#observeDepth);
  }

  /** Stops reporting the queue depth (the node closes): the meter no longer holds this instance. */
  stop(): void {
    this.#depth.removeCallback(this.#observeDepth);
  }

  /**
   * A slot for a request of `key`: at once when the node has room, otherwise once the request's
   * turn comes. Rejects with {@link NodeSaturatedError} when the queue is full or the wait is over.
   */
  enter(key: string): ReleaseSlot | Promise<ReleaseSlot> {
    if (this.#running < this.maxConcurrent && this.#queued === 0) {
      this.#running += 1;
      this.#waits.record(0);
      return this.#releaser();
    }
    if (this.#queued >= this.maxQueue) return Promise.reject(new NodeSaturatedError('admission.maxQueue', this.maxWaitMs));
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        since: this.#now(),
        timer: setTimeout(() => {
          if (!this.#remove(waiter)) return;
          this.#waits.record(this.maxWaitMs / 1000);
          reject(new NodeSaturatedError('admission.maxWaitMs', this.maxWaitMs));
        }, this.maxWaitMs),
        admit: resolve,
      };
      const queue = this.#queues.get(key);
      if (queue) queue.push(waiter);
      else this.#queues.set(key, [waiter]);
      this.#queued += 1;
    });
  }

  #releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      this.#next();
    };
  }

  /** Admits the next waiter, round-robin: the first key's first waiter, that key then going last. */
  #next(): void {
    while (this.#running < this.maxConcurrent && this.#queued > 0) {
      const [key, queue] = this.#queues.entries().next().value as [string, Waiter[]];
      const waiter = queue.shift()!;
      this.#queues.delete(key);
      if (queue.length > 0) this.#queues.set(key, queue);
      this.#queued -= 1;
      clearTimeout(waiter.timer);
      this.#running += 1;
      this.#waits.record((this.#now() - waiter.since) / 1000);
      waiter.admit(this.#releaser());
    }
  }

  #remove(waiter: Waiter): boolean {
    const queue = this.#queues.get(waiter.key);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.#queues.delete(waiter.key);
    this.#queued -= 1;
    return true;
  }

  /** Whether a request arriving now would be shed at once (the queue is full). */
  get full(): boolean {
    return this.#queued >= this.maxQueue;
  }

  /** Requests being served. */
  get running(): number {
    return this.#running;
  }

  /** Requests waiting for admission. */
  get queued(): number {
    return this.#queued;
  }
}

function count(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`admission.${name} must be a positive integer, got ${value}`);
  return value;
}
