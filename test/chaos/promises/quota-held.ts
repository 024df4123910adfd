import type { SystemPromise, Violation } from './promise.js';

/** The quota is never exceeded: no sample of the live rows shows an owner with more than maxPerPrincipal. */
export const quotaHeld: SystemPromise = {
  name: 'quota-held',
  says: 'the quota is never exceeded',
  check(index) {
    const violations: Violation[] = [];
    const max = index.run?.maxPerPrincipal ?? Infinity;
    for (const sample of index.samples) {
      const live = new Map<string, number>();
      for (const row of sample.live) live.set(row.owner_key, (live.get(row.owner_key) ?? 0) + 1);
      for (const [owner, count] of live) {
        if (count > max) violations.push({ promise: this.name, message: `owner ${owner} had ${count} live tasks (quota ${max}) at ${sample.t}`, evidence: [sample.seq] });
      }
    }
    return { violations, checked: index.samples.length };
  },
};
