import type { SystemPromise, Violation } from './promise.js';

/** How long past the lease a dead node's tasks may stay on it (the reaper's period, a claim, a busy 2-core machine). */
export const TAKEOVER_SLACK_MS = 10_000;

const GONE = new Set(['sigkill', 'sigterm', 'clock-skew', 'supervisor-restart']);

/**
 * A task whose node died is failed, or taken over (resumable), within the lease plus a bound:
 * each task a sample shows on the node just before it was killed (or drained, or restarted for a
 * skew) is, in the first sample past the lease, the slack and any database outage after the
 * node's end, and any time every other node was out too, off that node's process (another
 * holder, released, or no longer live).
 */
export const lostNodeTakenOver: SystemPromise = {
  name: 'lost-node-taken-over',
  says: 'a task whose node died is failed, or taken over (resumable), within the lease plus a bound',
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    const leaseMs = index.run?.leaseMs ?? 30_000;
    for (const fault of index.faults) {
      if (!GONE.has(fault.fault) || !fault.node) continue;
      const before = [...index.samples].reverse().find((s) => s.t <= fault.t && s.t >= fault.t - 2_000);
      if (!before) continue;
      const held = before.live.filter((row) => row.node_id?.split('/')[0] === fault.node);
      // The process ends at the signal for a kill; a drain may run until the process exits.
      const ended = fault.fault === 'sigkill' || fault.fault === 'supervisor-restart' ? fault.t : (fault.until ?? fault.t);
      // Nobody can take over while PostgreSQL is down or every other node is out: such time is added.
      const names = index.run?.nodeNames ?? Array.from({ length: index.run?.nodes ?? 0 }, (_, i) => `chaos-${i + 1}`);
      const others = names.filter((name) => name !== fault.node);
      let deadline = ended + leaseMs + TAKEOVER_SLACK_MS;
      for (let t = ended; t < deadline; t += 100) {
        if (index.databaseDown(t) || (others.length > 0 && others.every((name) => index.nodeOut(name, t)))) deadline += 100;
      }
      const after = index.samples.find((s) => s.t > deadline);
      if (!after) continue;
      for (const row of held) {
        checked++;
        const still = after.live.find((r) => r.id === row.id && r.node_id === row.node_id);
        if (still) {
          violations.push({
            promise: this.name,
            taskId: row.id,
            message: `on ${row.node_id} when it was lost (${fault.fault}); still there ${after.t - ended} ms after its end (lease ${leaseMs} ms)`,
            evidence: [before.seq, fault.seq, after.seq],
          });
        }
      }
    }
    return { violations, checked };
  },
};
