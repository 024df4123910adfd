import type { SystemPromise, Violation } from './promise.js';
import { TERMINAL } from './promise.js';

/** Every task not terminal at the end is live on a node that holds its lease, or claimable (no holder). */
export const unfinishedIsHeld: SystemPromise = {
  name: 'unfinished-is-held',
  says: 'every task that is not terminal at the end is live on a node that holds its lease, or claimable',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const final of index.finalRows.values()) {
      const row = final.row;
      if (TERMINAL.has(row.status) || row.expired) continue;
      checked++;
      if (row.node_id !== null && !row.lease_live) {
        violations.push({ promise: this.name, taskId: row.id, message: `${row.status} at the end, held by ${row.node_id}, whose lease is gone`, evidence: [final.seq] });
      }
    }
    return { violations, checked };
  },
};
