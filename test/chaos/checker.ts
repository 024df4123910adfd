// Checks a history against every promise of the system; the soak's verdict.
import { HistoryIndex } from './history-index.js';
import type { Numbered } from './history.js';
import { answerUsed } from './promises/answer-used.js';
import { cancelWins } from './promises/cancel-wins.js';
import { createdTaskExists } from './promises/created-task-exists.js';
import { journalAgrees } from './promises/journal-agrees.js';
import { lostNodeTakenOver } from './promises/lost-node-taken-over.js';
import { nodeSurvives } from './promises/node-survives.js';
import { oneTerminalStatus } from './promises/one-terminal-status.js';
import { ownerIsolation } from './promises/owner-isolation.js';
import type { SystemPromise, Violation } from './promises/promise.js';
import { quotaHeld } from './promises/quota-held.js';
import { resumableFinishes } from './promises/resumable-finishes.js';
import { unfinishedIsHeld } from './promises/unfinished-is-held.js';

export const PROMISES: readonly SystemPromise[] = [
  oneTerminalStatus,
  answerUsed,
  cancelWins,
  journalAgrees,
  resumableFinishes,
  lostNodeTakenOver,
  ownerIsolation,
  quotaHeld,
  createdTaskExists,
  unfinishedIsHeld,
  nodeSurvives,
];

export interface Verdict {
  readonly promises: readonly { readonly name: string; readonly says: string; readonly checked: number; readonly violations: readonly Violation[] }[];
  readonly violations: readonly Violation[];
}

export function check(events: readonly Numbered[], promises: readonly SystemPromise[] = PROMISES): Verdict {
  const index = new HistoryIndex(events);
  const results = promises.map((promise) => ({ name: promise.name, says: promise.says, ...promise.check(index) }));
  return { promises: results, violations: results.flatMap((result) => result.violations) };
}
