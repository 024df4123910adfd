import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TASK_ID_BYTES, expiryOfTaskId, isWellFormedTaskId, newTaskId } from '@mcp-tasks/core';

const HOUR = 3_600_000;

describe('a task id', () => {
  test('names the hour its task expires in, or that it never does, or nothing', () => {
    const expiresAt = Date.parse('2026-12-05T04:37:12.345Z');
    assert.deepEqual(expiryOfTaskId(newTaskId(expiresAt)), { hourStartsAt: Date.parse('2026-12-05T04:00:00Z') });
    assert.deepEqual(expiryOfTaskId(newTaskId(Math.floor(expiresAt / HOUR) * HOUR)), { hourStartsAt: Date.parse('2026-12-05T04:00:00Z') });
    assert.equal(expiryOfTaskId(newTaskId(null)), null);
    assert.equal(expiryOfTaskId(newTaskId()), undefined);
    // Past what three bytes of hours hold (the year 3883) or not a time: the id names no hour.
    assert.equal(expiryOfTaskId(newTaskId(0xff_ff_ff * HOUR)), undefined);
    assert.equal(expiryOfTaskId(newTaskId(Number.POSITIVE_INFINITY)), undefined);
  });

  test('keeps 144 random bits beside the hour, in 28 URL-safe characters', () => {
    const expiresAt = Date.now() + HOUR;
    const ids = new Set(Array.from({ length: 1_000 }, () => newTaskId(expiresAt)));
    assert.equal(ids.size, 1_000);
    for (const id of ids) {
      assert.equal(id.length, 28);
      assert.ok(isWellFormedTaskId(id));
      assert.equal(Buffer.from(id, 'base64url').length, 3 + TASK_ID_BYTES);
    }
  });

  test('of another shape says nothing of its expiry', () => {
    // An id minted before ids carried their hour: 18 random bytes, 24 characters.
    assert.equal(expiryOfTaskId(Buffer.alloc(18, 7).toString('base64url')), undefined);
    assert.equal(expiryOfTaskId('x'.repeat(27)), undefined);
    assert.equal(expiryOfTaskId('!!!!' + 'a'.repeat(24)), undefined);
    assert.equal(expiryOfTaskId(''), undefined);
  });
});
