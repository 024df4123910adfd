// The soak's fault schedule is the seed's alone: a failing seed replays the same faults.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAULT_KINDS, planFaults } from './faults.js';

describe('the chaos fault schedule', () => {
  it('is the same for the same seed, another for another seed, and spaced 3 to 7 s apart', () => {
    const plan = planFaults(31, 180_000, 3, { skew: true });
    assert.deepEqual(planFaults(31, 180_000, 3, { skew: true }), plan);
    assert.notDeepEqual(planFaults(32, 180_000, 3, { skew: true }), plan);
    for (let i = 1; i < plan.length; i++) {
      const gap = plan[i]!.at - plan[i - 1]!.at;
      assert.ok(gap >= 3_000 && gap <= 7_000, `gap ${gap}`);
    }
    assert.ok(plan.at(-1)!.at < 170_000, 'the last faults leave time to see their effects');
  });

  it('draws every kind of fault over a long run, on every node, and no clock skew without faketime', () => {
    const long = planFaults(7, 20 * 60_000, 3, { skew: true });
    assert.deepEqual(new Set(long.map((f) => f.fault)), new Set(FAULT_KINDS));
    assert.deepEqual(new Set(long.map((f) => f.node)), new Set([0, 1, 2]));
    assert.ok(!planFaults(7, 20 * 60_000, 3, { skew: false }).some((f) => f.fault === 'clock-skew'));
  });
});
