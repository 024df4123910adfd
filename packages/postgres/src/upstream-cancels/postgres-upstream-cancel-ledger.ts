import type { OwedUpstreamCancel, UpstreamCancelLedger, UpstreamCancelSettlement } from '@mcp-tasks/core';
import type { Kysely } from 'kysely';
import { claimDueUpstreamCancels } from './claim-due-upstream-cancels.js';
import { countOwedUpstreamCancels } from './count-owed-upstream-cancels.js';
import { oweUpstreamCancel } from './owe-upstream-cancel.js';
import { retryUpstreamCancelLater } from './retry-upstream-cancel-later.js';
import { settleUpstreamCancel } from './settle-upstream-cancel.js';
import { upstreamCancelsTable, type UpstreamCancelsTable } from './upstream-cancels-table.js';

/** The owed upstream cancels of every gateway node on this database: `<schema>.upstream_cancels`. */
export class PostgresUpstreamCancelLedger implements UpstreamCancelLedger {
  readonly #table: UpstreamCancelsTable;

  constructor(db: Kysely<any>, schema: string) {
    this.#table = upstreamCancelsTable(db, schema);
  }

  owe(cancel: Omit<OwedUpstreamCancel, 'attempts'>): Promise<void> {
    return oweUpstreamCancel(this.#table, cancel);
  }

  claimDue(upstreams: readonly string[], limit: number, leaseMs: number): Promise<OwedUpstreamCancel[]> {
    return claimDueUpstreamCancels(this.#table, upstreams, limit, leaseMs);
  }

  retryLater(taskId: string, delayMs: number, error: string): Promise<void> {
    return retryUpstreamCancelLater(this.#table, taskId, delayMs, error);
  }

  settle(taskId: string, settlement: UpstreamCancelSettlement): Promise<void> {
    return settleUpstreamCancel(this.#table, taskId, settlement);
  }

  owed(): Promise<ReadonlyMap<string, number>> {
    return countOwedUpstreamCancels(this.#table);
  }
}
