import { LimitReachedError } from '@mcp-tasks/core';

/** Options of {@link ListenStreamCaps}. */
export interface ListenStreamCapOptions {
  /** Open streams one authenticated owner may hold on this node. Default 16. */
  readonly maxPerOwner?: number;
  /** Open streams on this node, all callers together; more than `maxPerOwner`. Default 1 000. */
  readonly maxPerNode?: number;
}

export const DEFAULT_LISTEN_STREAM_CAPS = { maxPerOwner: 16, maxPerNode: 1_000 } as const;

/** Gives a stream slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

/**
 * Counts open streams per authenticated owner and per node. The per-owner cap is below the node's,
 * so no one owner can take every slot and lock the others out. A stream without an authenticated
 * subject has no owner to count against (every such caller is the same owner, so that cap would
 * be a node cap): it counts against the node only, and one HTTP/1.1 connection carries one
 * stream at a time, so that is also a bound per connection. Task listens and 2025-11-25
 * `tasks/result` streams have caps of their own (one instance each), so that listens held open
 * never take the only way a 2025-11-25 client has to its result.
 */
export class ListenStreamCaps {
  readonly maxPerOwner: number;
  readonly maxPerNode: number;
  readonly #name: string;
  readonly #what: string;
  readonly #byOwner = new Map<string, number>();
  #open = 0;

  /** `name` names the caps in their refusals (`listenStreams`, `resultStreams`), `what` the streams they count. */
  constructor(options: ListenStreamCapOptions = {}, name = 'listenStreams', what = 'open task listen streams') {
    this.#name = name;
    this.#what = what;
    this.maxPerOwner = count(options.maxPerOwner ?? DEFAULT_LISTEN_STREAM_CAPS.maxPerOwner, `${name}.maxPerOwner`);
    this.maxPerNode = count(options.maxPerNode ?? Math.max(DEFAULT_LISTEN_STREAM_CAPS.maxPerNode, this.maxPerOwner + 1), `${name}.maxPerNode`);
    if (this.maxPerOwner >= this.maxPerNode) {
      throw new Error(`${name}.maxPerOwner (${this.maxPerOwner}) must be below maxPerNode (${this.maxPerNode}), or one owner could take every stream`);
    }
  }

  /**
   * Takes a slot for a new stream of `ownerKey` (`undefined`: a caller without an authenticated
   * subject, counted by the node only), or throws {@link LimitReachedError} naming the cap that is full.
   */
  admit(ownerKey: string | undefined): ReleaseSlot {
    const owned = ownerKey === undefined ? 0 : (this.#byOwner.get(ownerKey) ?? 0);
    if (owned >= this.maxPerOwner) throw new LimitReachedError(`${this.#name}.maxPerOwner`, this.maxPerOwner, `${this.#what} for this owner`);
    if (this.#open >= this.maxPerNode) throw new LimitReachedError(`${this.#name}.maxPerNode`, this.maxPerNode, `${this.#what} on this node`);
    if (ownerKey !== undefined) this.#byOwner.set(ownerKey, owned + 1);
    this.#open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      if (ownerKey === undefined) return;
      const left = (this.#byOwner.get(ownerKey) ?? 1) - 1;
      if (left === 0) this.#byOwner.delete(ownerKey);
      else this.#byOwner.set(ownerKey, left);
    };
  }

  /** Open streams on this node. */
  get open(): number {
    return this.#open;
  }
}

function count(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  return value;
}
