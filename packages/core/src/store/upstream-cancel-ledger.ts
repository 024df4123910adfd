/** A cancel a gateway owes an upstream: its own task, and the upstream task it mirrors. */
export interface OwedUpstreamCancel {
  /** The gateway's own task. */
  readonly taskId: string;
  /** The mounted upstream's name. */
  readonly upstream: string;
  readonly upstreamTaskId: string;
  /** The upstream session the task belongs to (a stateful 2025-11-25 upstream). */
  readonly session?: string;
  /** The gateway caller's subject, whose upstream credential made the task when callers are apart upstream (`identity`); absent: the gateway's own. */
  readonly subject?: string;
  /** Attempts so far, this claim's included. */
  readonly attempts: number;
}

/** How an attempt ended: the upstream took the cancel, its task had already ended, or the ledger gives up. */
export type UpstreamCancelSettlement = 'acknowledged' | 'ended' | 'abandoned';

/**
 * The cancels a gateway owes its upstreams, kept where every node sees them (a shared store's
 * table) until the upstream acknowledges each one: a cancel refused by a busy upstream, or lost
 * with the node that received it, is tried again by whichever node claims it next.
 */
export interface UpstreamCancelLedger {
  /** Records a cancel owed for `taskId` (once: recording it again changes nothing). */
  owe(cancel: Omit<OwedUpstreamCancel, 'attempts'>): Promise<void>;
  /**
   * Claims up to `limit` owed cancels of `upstreams` that are due, each for `leaseMs` (no other
   * node takes it meanwhile), counting the attempt.
   */
  claimDue(upstreams: readonly string[], limit: number, leaseMs: number): Promise<OwedUpstreamCancel[]>;
  /** The attempt failed: tried again no sooner than `delayMs` from now. */
  retryLater(taskId: string, delayMs: number, error: string): Promise<void>;
  /** The cancel is owed no more. */
  settle(taskId: string, settlement: UpstreamCancelSettlement): Promise<void>;
  /** How many cancels are still owed, by upstream. */
  owed(): Promise<ReadonlyMap<string, number>>;
}
