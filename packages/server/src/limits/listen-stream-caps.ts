import { LimitReachedError } from '@mcp-tasks/core';

/** Options of {@link ListenStreamCaps}. */
export interface ListenStreamCapOptions {
  /** Open task listen streams one owner may hold on this node. Default 16. */
  readonly maxPerOwner?: number;
  /** Open task listen streams on this node, all owners together; more than `maxPerOwner`. Default 1 000. */
  readonly maxPerNode?: number;
}

export const DEFAULT_LISTEN_STREAM_CAPS = { maxPerOwner: 16, maxPerNode: 1_000 } as const;

/** Gives a stream slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

/**
 * Counts open task listen streams per owner and per node. The per-owner cap is below the node's,
 * so no one owner can take every slot and lock the others out.
 */
export class ListenStreamCaps {
  readonly maxPerOwner: number;
  readonly maxPerNode: number;
  readonly #byOwner = new Map<string, number>();
  #open = 0;

  constructor(options: ListenStreamCapOptions = {}) {
    this.maxPerOwner = count(options.maxPerOwner ?? DEFAULT_LISTEN_STREAM_CAPS.maxPerOwner, 'maxPerOwner');
    this.maxPerNode = count(options.maxPerNode ?? Math.max(DEFAULT_LISTEN_STREAM_CAPS.maxPerNode, this.maxPerOwner + 1), 'maxPerNode');
    if (this.maxPerOwner >= this.maxPerNode) {
      throw new Error(`listenStreams.maxPerOwner (${this.maxPerOwner}) must be below maxPerNode (${this.maxPerNode}), or one owner could take every stream`);
    }
  }

  /** Takes a slot for `ownerKey`'s new stream, or throws {@link LimitReachedError} naming the cap that is full. */
  admit(ownerKey: string): ReleaseSlot {
    const owned = this.#byOwner.get(ownerKey) ?? 0;
    if (owned >= this.maxPerOwner) throw new LimitReachedError('listenStreams.maxPerOwner', this.maxPerOwner, 'open task listen streams for this owner');
    if (this.#open >= this.maxPerNode) throw new LimitReachedError('listenStreams.maxPerNode', this.maxPerNode, 'open task listen streams on this node');
    this.#byOwner.set(ownerKey, owned + 1);
    this.#open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
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
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`listenStreams.${name} must be a positive integer, got ${value}`);
  return value;
}
