import { ANSWER_METHODS } from '../transport.js';
import { resultText } from '../history-index.js';
import type { SystemPromise, Violation } from './promise.js';

/**
 * Every acknowledged tasks/update answer is used: the task ends with it (its result is what that
 * answer leads to), or was cancelled or expired. A task that is not resumable may also end
 * `failed` when its run was lost (its node died or lost its lease, as documented) or a fault hit
 * between the answer and its end.
 */
export const answerUsed: SystemPromise = {
  name: 'answer-used',
  says: 'every acknowledged answer (a tasks/update, or a 2025-11-25 response to a tasks/result stream\'s request) is used: the task ends with it, or was cancelled or expired',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const task of index.tasks.values()) {
      const acked = index.ownRequests(task.id).filter((e) => ANSWER_METHODS.has(e.method) && e.result && !e.error);
      if (acked.length === 0) continue;
      const final = index.finalRows.get(task.id);
      if (!final) continue;
      checked += acked.length;
      const row = final.row;
      if (row.status === 'cancelled' || row.expired || row.status === 'working' || row.status === 'input_required') continue;
      // The first acknowledged answer of each key is the one that counts (later ones are ignored).
      const answers: Record<string, any> = {};
      for (const update of acked) for (const [key, value] of Object.entries(update.params['inputResponses'] ?? {})) if (!(key in answers)) answers[key] = value;
      const evidence = [task.create.seq, ...acked.map((e) => e.seq), final.seq];
      if (row.status === 'failed') {
        // A run that is not resumable dies with its node (or its node's lease): documented, not a lost answer.
        const runLost = /^The server (running this task stopped|shut down)/.test(String(row.error?.message ?? ''));
        const faulted = index.faults.some((f) => f.t <= row.updated && (f.until ?? f.t) >= acked[0]!.t0);
        if (!row.resumable && !faulted && !runLost) violations.push({ promise: this.name, taskId: task.id, message: `answered, then failed with no fault in between: ${JSON.stringify(row.error)}`, evidence });
        continue;
      }
      const expected = expectedText(task.create.params, answers);
      if (expected === undefined) continue;
      const text = resultText(row.result) ?? '';
      if (!text.startsWith(expected)) violations.push({ promise: this.name, taskId: task.id, message: `answered ${JSON.stringify(answers)}: expected "${expected}…", the task ended "${text}"`, evidence });
    }
    return { violations, checked };
  },
};

/** What the demo tool's result starts with given its answers; undefined when the answers do not decide it. */
export function expectedText(callParams: Record<string, any>, answers: Record<string, any>): string | undefined {
  const args = callParams['arguments'] ?? {};
  const yes = (answer: any) => answer?.action === 'accept' && answer?.content?.confirm === true;
  switch (callParams['name']) {
    case 'confirm_delete':
      if (!('confirm' in answers)) return undefined;
      return yes(answers['confirm']) ? `Deleted ${args.filename}.` : `Kept ${args.filename}.`;
    case 'multi_input': {
      if (!('name' in answers) || !('confirm' in answers)) return undefined;
      const name = answers['name']?.content?.name;
      return `${typeof name === 'string' ? name : 'someone'} ${answers['confirm']?.action === 'accept' ? 'confirmed' : 'declined'}.`;
    }
    case 'export': {
      if (!('confirm' in answers)) return undefined;
      const files = args.files ?? 10;
      return yes(answers['confirm']) ? `Exported ${files} of ${files} files.` : `Exported 0 of ${files} files.`;
    }
    default:
      return undefined;
  }
}
