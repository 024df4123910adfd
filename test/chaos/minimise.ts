// Minimisation: the shortest excerpt of a history that still breaks a promise. It starts from
// the events about the violation's task (or its evidence) and drops one event at a time while
// the same promise still fails on what is left, so what is printed is all that the failure needs.
import { check } from './checker.js';
import type { Numbered } from './history.js';
import type { SystemPromise, Violation } from './promises/promise.js';

export function minimise(events: readonly Numbered[], violation: Violation, promise: SystemPromise): Numbered[] {
  const breaks = (subset: readonly Numbered[]) =>
    check(subset, [promise]).violations.some((v) => v.promise === violation.promise && v.taskId === violation.taskId);
  const kept = (e: Numbered) => e.kind === 'run' || e.kind === 'end';
  let excerpt = events.filter((e) => kept(e) || violation.evidence.includes(e.seq) || concerns(e, violation.taskId)).map((e) => narrow(e, violation.taskId));
  if (!breaks(excerpt)) excerpt = events.filter((e) => kept(e) || violation.evidence.includes(e.seq) || concerns(e, violation.taskId) || e.kind === 'sample' || e.kind === 'fault');
  if (!breaks(excerpt)) return events.filter((e) => violation.evidence.includes(e.seq));
  for (let i = excerpt.length - 1; i >= 0; i--) {
    if (kept(excerpt[i]!)) continue;
    const without = excerpt.slice(0, i).concat(excerpt.slice(i + 1));
    if (breaks(without)) excerpt = without;
  }
  return excerpt.filter((e) => !kept(e) || e.kind === 'run');
}

function concerns(event: Numbered, taskId: string | undefined): boolean {
  if (taskId === undefined) return false;
  switch (event.kind) {
    case 'rpc':
      return event.params['taskId'] === taskId || (event.method === 'tools/call' && JSON.stringify(event.result ?? {}).includes(taskId));
    case 'notification':
      return event.taskId === taskId;
    case 'final-row':
      return event.row.id === taskId;
    case 'final-step':
      return event.task_id === taskId;
    case 'sample':
      return event.live.some((row) => row.id === taskId);
    default:
      return false;
  }
}

/** A sample cut down to the violation's task, so the excerpt does not print every live row. */
function narrow(event: Numbered, taskId: string | undefined): Numbered {
  if (event.kind !== 'sample' || taskId === undefined) return event;
  return { ...event, live: event.live.filter((row) => row.id === taskId) };
}
