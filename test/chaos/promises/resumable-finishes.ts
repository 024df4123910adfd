import { ANSWER_METHODS } from '../transport.js';
import { resultText } from '../history-index.js';
import type { SystemPromise, Violation } from './promise.js';

/**
 * A resumable task that nobody cancelled is not ended by the runtime's own aborts (a lost node, a
 * drain, a database outage): an `export` that completes has exported every file (none when its
 * confirmation was declined), and one that fails has used up its attempts.
 */
export const resumableFinishes: SystemPromise = {
  name: 'resumable-finishes',
  says: 'a resumable task nobody cancelled completes whole (an export: all its files) or fails only after its attempts are used up',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const task of index.tasks.values()) {
      const final = index.finalRows.get(task.id);
      if (!final || !final.row.resumable || task.create.params['name'] !== 'export') continue;
      // "Nobody cancelled": a cancel that got no acknowledgement (an outage) may still have reached the run.
      if (index.ownRequests(task.id).some((e) => e.method === 'tasks/cancel')) continue;
      checked++;
      const row = final.row;
      const evidence = [task.create.seq, final.seq];
      const files = Number(task.create.params['arguments']?.['files'] ?? 10);
      if (row.status === 'completed') {
        const exported = /^Exported (\d+) of/.exec(resultText(row.result) ?? '');
        const declined = index.ownRequests(task.id).some((e) => ANSWER_METHODS.has(e.method) && e.params['inputResponses']?.['confirm'] && e.params['inputResponses']['confirm'].content?.confirm !== true);
        if (exported && Number(exported[1]) !== files && !(declined && Number(exported[1]) === 0)) {
          violations.push({ promise: this.name, taskId: task.id, message: `completed with part of its files: "${resultText(row.result)}"`, evidence });
        }
      } else if (row.status === 'failed' && row.attempt - row.handovers < row.max_attempts) {
        violations.push({ promise: this.name, taskId: task.id, message: `failed after ${row.attempt - row.handovers} of ${row.max_attempts} attempts: ${JSON.stringify(row.error)}`, evidence });
      }
    }
    return { violations, checked };
  },
};
