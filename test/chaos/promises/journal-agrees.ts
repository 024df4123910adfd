import { resultText } from '../history-index.js';
import type { SystemPromise, Violation } from './promise.js';

const EXPORTED = /^Exported (\d+) of (\d+) files\.(?: \(resumed (\d+) times?, (\d+) files redone\))?$/;

/**
 * No step of a resumable task completes twice, and `export`'s "(resumed K times, R files redone)"
 * agrees with the journal: every file step's work started at most once per run, the finished
 * steps are files 1..N of the N it reports, R is the number of file steps started more than once,
 * and K is the runs that got to export (the `run-<attempt>` steps) before the last.
 */
export const journalAgrees: SystemPromise = {
  name: 'journal-agrees',
  says: 'no step of a resumable task completes twice, and export\'s "(resumed K times, R files redone)" agrees with the journal',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const final of index.finalRows.values()) {
      const row = final.row;
      if (row.tool !== 'export') continue;
      checked++;
      const steps = index.steps.get(row.id) ?? [];
      const evidence = [final.seq, ...steps.map((s) => s.seq)];
      const overRun = steps.find((s) => s.starts > row.attempt);
      if (overRun) {
        violations.push({ promise: this.name, taskId: row.id, message: `step ${overRun.name} started ${overRun.starts} times in ${row.attempt} runs`, evidence });
        continue;
      }
      // Besides its files, each run of an export that got to export journals `run-<attempt>`; a
      // run lost while journaling it (started, never done) got there too, and the run after it
      // is a resumption.
      const runs = steps.filter((s) => s.name.startsWith('run-')).length;
      const done = steps.filter((s) => s.done && !s.name.startsWith('run-')).map((s) => s.name);
      if (done.some((name, i) => name !== `file-${i + 1}`)) {
        violations.push({ promise: this.name, taskId: row.id, message: `the finished steps are not files 1..N: ${done.join(', ')}`, evidence });
        continue;
      }
      if (row.status !== 'completed') continue;
      const text = resultText(row.result) ?? '';
      const match = EXPORTED.exec(text);
      if (!match) {
        violations.push({ promise: this.name, taskId: row.id, message: `an export result that says none of what it must: "${text}"`, evidence });
        continue;
      }
      const [, exported, , resumed, redone] = match;
      const redoneInJournal = steps.filter((s) => s.name.startsWith('file-') && s.starts > 1).length;
      const problems: string[] = [];
      if (Number(exported) !== done.length) problems.push(`says ${exported} exported, the journal has ${done.length} finished`);
      // Resumptions are runs that got to export, less the first (a park for the confirmation and
      // the claim of its answer is no resumption, though it raises the attempt).
      if ((resumed === undefined ? 0 : Number(resumed)) !== Math.max(runs - 1, 0)) problems.push(`says resumed ${resumed ?? 0} times, the journal has ${runs} runs`);
      if ((redone === undefined ? 0 : Number(redone)) !== redoneInJournal) problems.push(`says ${redone ?? 0} files redone, the journal ${redoneInJournal}`);
      if (problems.length > 0) violations.push({ promise: this.name, taskId: row.id, message: `"${text}": ${problems.join('; ')}`, evidence });
    }
    return { violations, checked };
  },
};
