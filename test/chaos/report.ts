// The soak's verdict as a person reads it: faults by kind, what was checked per promise, and for
// each violation the schedule and the shortest excerpt that shows it.
import { check, PROMISES } from './checker.js';
import { SUPERVISOR_RESTART, type PlannedFault } from './faults.js';
import type { Numbered } from './history.js';
import { minimise } from './minimise.js';
import { INPUT_RESPONSE } from './transport.js';

export function report(events: readonly Numbered[], context: { file: string; schedule: readonly PlannedFault[] | undefined }): number {
  const verdict = check(events);
  const run = events.find((e) => e.kind === 'run');
  const faults = new Map<string, number>();
  for (const e of events) if (e.kind === 'fault' && e.fault !== SUPERVISOR_RESTART) faults.set(e.fault, (faults.get(e.fault) ?? 0) + 1);
  const restarts = events.filter((e) => e.kind === 'fault' && e.fault === SUPERVISOR_RESTART).length;
  const rpcs = events.filter((e) => e.kind === 'rpc');
  const count = (...methods: string[]) => rpcs.filter((e) => e.kind === 'rpc' && methods.includes(e.method) && e.result && !e.error).length;
  console.log(`chaos: seed ${run?.kind === 'run' ? run.seed : '?'}: ${rpcs.length} requests; tasks created ${verdict.promises.find((p) => p.name === 'created-task-exists')?.checked ?? 0}, answers acknowledged ${count('tasks/update', INPUT_RESPONSE)} (${count(INPUT_RESPONSE)} of them 2025-11-25 answers to a tasks/result stream's requests), cancels acknowledged ${count('tasks/cancel')}`);
  console.log(`chaos: faults: ${[...faults].map(([kind, n]) => `${kind} ${n}`).join(', ') || 'none'}${restarts > 0 ? `; nodes started again after a crash: ${restarts}` : ''}`);
  for (const promise of verdict.promises) console.log(`chaos:   ${promise.violations.length === 0 ? 'ok  ' : 'FAIL'} ${promise.name} (${promise.checked} checked): ${promise.says}`);
  if (verdict.violations.length === 0) {
    console.log(`chaos: no violations (history ${context.file})`);
    return 0;
  }
  console.log(`chaos: ${verdict.violations.length} violation(s); history ${context.file}`);
  if (context.schedule) {
    console.log('chaos: the fault schedule of this seed (offset ms, fault, node, amount):');
    for (const fault of context.schedule) console.log(`  +${fault.at} ${fault.fault} node ${fault.node + 1} ${fault.amount}`);
  }
  const shown = new Set<string>();
  for (const violation of verdict.violations) {
    // One excerpt per promise and task is enough; the rest are listed.
    const key = `${violation.promise}:${violation.taskId}`;
    console.log(`\nchaos: VIOLATION ${violation.promise}${violation.taskId ? ` task ${violation.taskId}` : ''}: ${violation.message}`);
    if (shown.has(key) || shown.size >= 10) continue;
    shown.add(key);
    const promise = PROMISES.find((p) => p.name === violation.promise)!;
    const excerpt = minimise(events, violation, promise);
    console.log('  shortest excerpt:');
    for (const event of excerpt) console.log(`  ${JSON.stringify(event)}`);
    // Not needed to break the promise, but what a reader looks for next: the faults of that time.
    const times = excerpt.flatMap((e) => (e.kind === 'rpc' ? [e.t0, e.t1] : e.kind === 'sample' || e.kind === 'fault' ? [e.t] : e.kind === 'final-row' ? [e.row.updated] : []));
    const from = Math.min(...times);
    const to = Math.max(...times);
    const during = events.filter((e) => e.kind === 'fault' && e.fault !== 'skipped' && (e.until ?? e.t) >= from && e.t <= to);
    if (during.length > 0) console.log(`  faults meanwhile:\n${during.map((e) => `  ${JSON.stringify(e)}`).join('\n')}`);
  }
  return 1;
}
