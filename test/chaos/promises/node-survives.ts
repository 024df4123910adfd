import type { SystemPromise, Violation } from './promise.js';

/**
 * A node process ends only when it is told to (SIGTERM, SIGKILL): a database restart, a dropped
 * or stalled connection, a flood or a stopped peer is something a node rides out, not a reason to
 * exit. (A process that cannot reach its database while it starts may exit: the harness starts it
 * again, as a supervisor would, and records that in the fault's detail, not here.)
 */
export const nodeSurvives: SystemPromise = {
  name: 'node-survives',
  says: 'a node process exits only when it is told to',
  check(index) {
    const violations: Violation[] = index.crashes.map((crash) => ({
      promise: this.name,
      message: `${crash.node} exited (${crash.code === null ? `signal ${crash.signal}` : `code ${crash.code}`}) without being told to:\n${crash.output}`,
      evidence: [crash.seq],
    }));
    const started = index.run?.nodes ?? 0;
    return { violations, checked: started + index.faults.filter((f) => f.node && ['sigkill', 'sigterm', 'clock-skew'].includes(f.fault)).length };
  },
};
