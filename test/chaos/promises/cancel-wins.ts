import type { SystemPromise, Violation } from './promise.js';
import { TERMINAL } from './promise.js';

/**
 * An acknowledged cancel ends the task `cancelled`, unless it was already terminal. "Already":
 * the task's row ended before the cancel was answered, and no read sent after the answer saw it
 * still live (a 2025-11-25 cancel answers with the task, so `cancelled` there is the promise itself).
 */
export const cancelWins: SystemPromise = {
  name: 'cancel-wins',
  says: 'an acknowledged cancel ends the task cancelled (unless it was already terminal)',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    const skewed = index.faults.some((f) => f.fault === 'clock-skew');
    for (const task of index.tasks.values()) {
      const own = index.ownRequests(task.id);
      const acked = own.filter((e) => e.method === 'tasks/cancel' && e.result && !e.error);
      const final = index.finalRows.get(task.id);
      if (acked.length === 0 || !final) continue;
      checked += acked.length;
      if (final.row.status === 'cancelled' || final.row.expired) continue;
      const cancel = acked[0]!;
      if (cancel.rev === '2025' && cancel.result?.['status'] === 'cancelled') {
        violations.push({ promise: this.name, taskId: task.id, message: `the cancel answered cancelled, the task ended ${final.row.status}`, evidence: [task.create.seq, cancel.seq, final.seq] });
        continue;
      }
      const liveLater = index.observations(task.id).find((o) => o.t0 > cancel.t1 && !TERMINAL.has(o.status));
      if (liveLater) {
        violations.push({ promise: this.name, taskId: task.id, message: `cancel acknowledged, a later read saw ${liveLater.status}, the task ended ${final.row.status}`, evidence: [task.create.seq, cancel.seq, liveLater.seq, final.seq] });
        continue;
      }
      // The row's last change is its terminal one; well after the acknowledgement, the cancel lost.
      if (!skewed && TERMINAL.has(final.row.status) && final.row.updated > cancel.t1 + 1_000) {
        violations.push({ promise: this.name, taskId: task.id, message: `cancel acknowledged at ${cancel.t1}, the task ended ${final.row.status} at ${final.row.updated}`, evidence: [task.create.seq, cancel.seq, final.seq] });
      }
    }
    return { violations, checked };
  },
};
