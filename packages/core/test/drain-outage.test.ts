// A node drains while its store is out (a SIGTERM during a PostgreSQL restart): the release of a
// resumable run cannot be written. Found by the chaos soak (seed 4101): such an export was failed
// "The server shut down before the task finished" after 1 of its 3 attempts, when the database
// came back, instead of being resumed by another node. It is left to the lease, whose reaper
// releases it once the draining node is gone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { MemoryTaskStore, TaskRuntime, type RunClaim, type TaskContext, type TaskOwner, type TaskRecord, type TaskRef } from '@mcp-tasks/core';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'drain-outage', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** A memory store whose releases fail while `out`, as a database that is restarting makes them fail. */
class ReleaseOutageStore extends MemoryTaskStore {
  out = false;
  releases = 0;
  override async release(ref: TaskRef, claim: RunClaim): Promise<TaskRecord | undefined> {
    this.releases += 1;
    if (this.out) throw new Error('release failed: the connection was lost');
    return super.release(ref, claim);
  }
}

/** Runs until its signal aborts it, one journaled step first. */
const stepsUntilAborted = async (_args: unknown, ctx: TaskContext) => {
  await ctx.step('one', () => 1);
  await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
  return text('never');
};

describe('a drain while the store is out', { timeout: 30_000 }, () => {
  test('leaves a resumable task to the lease, not failed, and reports the release that could not be written', async (t) => {
    const store = new ReleaseOutageStore();
    const errors: unknown[] = [];
    const a = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 5_000, onError: (error) => errors.push(error) });
    t.after(async () => {
      await a.close();
      await store.close();
    });
    const record = await a.start({ owner: owner(), tool: 'steps', args: {}, execute: stepsUntilAborted, resumable: true });
    // Its first step journaled: the run is under way.
    for (let i = 0; i < 200 && (await store.steps(record)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    store.out = true;
    await a.drain(20);
    // The database is back: nothing the drain left behind may end the task now.
    store.out = false;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const left = await store.get(record);
    assert.equal(store.releases, 1, 'the drain tried to hand the task over');
    assert.deepEqual([left?.status, left?.nodeId, left?.attempt], ['working', 'a', 1], `the task is left held by the drained node, for its lease: ${JSON.stringify(left?.error)}`);
    assert.ok(errors.some((error) => /release failed/.test(String(error))), 'the failed release is reported');
  });

  test('still fails a task that is not resumable (nothing could resume it)', async (t) => {
    const store = new ReleaseOutageStore();
    const a = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 5_000, onError: () => {} });
    t.after(async () => {
      await a.close();
      await store.close();
    });
    const record = await a.start({ owner: owner(), tool: 'plain', args: {}, execute: stepsUntilAborted, resumable: false });
    for (let i = 0; i < 200 && (await store.steps(record)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await a.drain(20);
    const failed = await store.get(record);
    assert.deepEqual([failed?.status, failed?.error?.message], ['failed', 'The server shut down before the task finished']);
    assert.equal(store.releases, 0);
  });
});
