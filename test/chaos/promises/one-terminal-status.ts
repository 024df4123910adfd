import { resultText } from '../history-index.js';
import type { SystemPromise, Violation } from './promise.js';
import { TERMINAL } from './promise.js';

/** A task has at most one terminal status (and one result), and once a read returned it, every later read agrees. */
export const oneTerminalStatus: SystemPromise = {
  name: 'one-terminal-status',
  says: 'a task has at most one terminal status, and once terminal, every later read agrees',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const taskId of index.tasks.keys()) {
      const seen = index.observations(taskId);
      const final = index.finalRows.get(taskId);
      checked++;
      const firstTerminal = seen.find((o) => TERMINAL.has(o.status));
      const other = seen.find((o) => TERMINAL.has(o.status) && firstTerminal && o.status !== firstTerminal.status);
      if (firstTerminal && other) {
        violations.push({ promise: this.name, taskId, message: `read ${firstTerminal.status}, later ${other.status}`, evidence: [firstTerminal.seq, other.seq] });
        continue;
      }
      if (firstTerminal && final && final.row.status !== firstTerminal.status && !final.row.expired) {
        violations.push({ promise: this.name, taskId, message: `read ${firstTerminal.status}, the row ends ${final.row.status}`, evidence: [firstTerminal.seq, final.seq] });
        continue;
      }
      const finalText = resultText(final?.row.result);
      const changed = seen.find((o) => o.text !== undefined && finalText !== undefined && final!.row.status === o.status && o.text !== finalText);
      if (changed) {
        violations.push({ promise: this.name, taskId, message: `read "${changed.text}", the row ends "${finalText}"`, evidence: [changed.seq, final!.seq] });
        continue;
      }
      // A read sent after another read's terminal answer arrived must not see the task live again.
      for (const terminal of seen.filter((o) => TERMINAL.has(o.status))) {
        const later = seen.find((o) => o.t0 > terminal.t1 && !TERMINAL.has(o.status));
        if (later) {
          violations.push({ promise: this.name, taskId, message: `read ${terminal.status}, then ${later.status} again`, evidence: [terminal.seq, later.seq] });
          break;
        }
      }
    }
    return { violations, checked };
  },
};
