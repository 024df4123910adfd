// A resumable run whose journal cannot be written (the database restarting, a dropped connection)
// has lost its footing: what its tool does next is not the task's outcome. The chaos soak found
// exports completed with part of their files (the tool caught the step's error and returned what
// it had) and failed "Internal error" after one of three attempts (it let the error through);
// both should hand the task to another run, which resumes it from the journal.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { MemoryTaskStore, TaskRuntime, type JsonValue, type RunClaim, type TaskContext, type TaskOwner, type TaskRecord, type TaskRef } from '@mcp-tasks/core';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'journal-outage', clientId: 'client', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** A memory store whose next `failing` journal writes fail as a lost connection makes them fail. */
class JournalOutageStore extends MemoryTaskStore {
  failing = 0;
  override async finishStep(ref: TaskRef, claim: RunClaim, name: string, result: JsonValue): Promise<boolean> {
    if (this.failing > 0) {
      this.failing -= 1;
      throw new Error('finishStep failed: the connection was lost');
    }
    return super.finishStep(ref, claim, name, result);
  }
}

async function settled(store: MemoryTaskStore, record: TaskRecord, timeoutMs = 10_000): Promise<TaskRecord> {
  const started = Date.now();
  for (;;) {
    const task = await store.get(record);
    if (task && task.status !== 'working' && task.status !== 'input_required') return task;
    if (Date.now() - started > timeoutMs) throw new Error(`task still ${task?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The demo's export in small: one journaled step per file, stopping at the first step that throws. */
function exporter(files: number, catches: boolean) {
  return async (_args: unknown, ctx: TaskContext) => {
    let exported = 0;
    while (exported < files) {
      const file = exported + 1;
      try {
        await ctx.step(`file-${file}`, () => file);
      } catch (error) {
        if (!catches) throw error;
        break;
      }
      exported = file;
    }
    return text(`Exported ${exported} of ${files} files.`);
  };
}

describe('a journal write the store refuses', { timeout: 30_000 }, () => {
  for (const catches of [true, false]) {
    test(`a resumable run whose tool ${catches ? 'catches' : 'lets through'} the journal's error hands its task over, and another run finishes it from the journal`, async (t) => {
      const store = new JournalOutageStore();
      const a = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 50 });
      t.after(async () => {
        await a.close();
        await store.close();
      });
      const execute = exporter(4, catches);
      a.registerTool('export', { execute: execute as never, resumable: true });
      store.failing = 1;
      const record = await a.start({ owner: owner(), tool: 'export', args: {}, execute, resumable: true });
      const done = await settled(store, record);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.deepEqual(done.result, text('Exported 4 of 4 files.'), 'no outcome of the run that lost its journal');
      assert.equal(done.attempt, 2, 'a second run finished it');
      const steps = await store.steps(record);
      assert.deepEqual(
        steps.filter((step) => step.done).map((step) => step.name),
        ['file-1', 'file-2', 'file-3', 'file-4'],
      );
    });
  }

  test('a run that is not resumable fails with an internal error, as before (there is no journal to resume from)', async (t) => {
    const store = new JournalOutageStore();
    const a = new TaskRuntime({ store, nodeId: 'a', pollIntervalMs: 50, onError: () => {} });
    t.after(async () => {
      await a.close();
      await store.close();
    });
    const execute = exporter(2, false);
    store.failing = 1;
    const record = await a.start({ owner: owner(), tool: 'export', args: {}, execute, resumable: false });
    const done = await settled(store, record);
    assert.equal(done.status, 'failed');
    assert.match(String(done.error?.message), /^Internal error \(ref [0-9a-f]+\)$/);
  });
});
