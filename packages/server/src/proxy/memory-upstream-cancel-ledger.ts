import type { OwedUpstreamCancel, UpstreamCancelLedger, UpstreamCancelSettlement } from '@mcp-tasks/core';

interface Owed {
  readonly cancel: Omit<OwedUpstreamCancel, 'attempts'>;
  attempts: number;
  dueAt: number;
}

/** Most cancels kept owed in one process: beyond it the oldest is dropped (the upstream task's TTL ends it). */
const MAX_OWED = 10_000;

/**
 * The owed cancels of one process, for a store that cannot share them (`MemoryTaskStore`): retried
 * like the shared ledger's, but lost with the process.
 */
export class MemoryUpstreamCancelLedger implements UpstreamCancelLedger {
  readonly #owed = new Map<string, Owed>();

  async owe(cancel: Omit<OwedUpstreamCancel, 'attempts'>): Promise<void> {
    if (this.#owed.has(cancel.taskId)) return;
    this.#owed.set(cancel.taskId, { cancel, attempts: 0, dueAt: Date.now() });
    if (this.#owed.size > MAX_OWED) this.#owed.delete(this.#owed.keys().next().value as string);
  }

  async claimDue(upstreams: readonly string[], limit: number, leaseMs: number): Promise<OwedUpstreamCancel[]> {
    const now = Date.now();
    const claimed: OwedUpstreamCancel[] = [];
    for (const owed of this.#owed.values()) {
      if (claimed.length >= limit) break;
      if (owed.dueAt > now || !upstreams.includes(owed.cancel.upstream)) continue;
      owed.attempts += 1;
      owed.dueAt = now + leaseMs;
      claimed.push({ ...owed.cancel, attempts: owed.attempts });
    }
    return claimed;
  }

  async retryLater(taskId: string, delayMs: number): Promise<void> {
    const owed = this.#owed.get(taskId);
    if (owed) owed.dueAt = Date.now() + delayMs;
  }

  async settle(taskId: string, _settlement: UpstreamCancelSettlement): Promise<void> {
    this.#owed.delete(taskId);
  }

  async owed(): Promise<ReadonlyMap<string, number>> {
    const counts = new Map<string, number>();
    for (const { cancel } of this.#owed.values()) counts.set(cancel.upstream, (counts.get(cancel.upstream) ?? 0) + 1);
    return counts;
  }
}
