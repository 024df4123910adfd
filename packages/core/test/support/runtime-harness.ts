import { afterEach } from 'node:test';
import { MemoryTaskStore, TaskRuntime, type DetailedTask, type TaskRef, type TaskRuntimeOptions } from '@mcp-tasks/core';

// What the runtime's own tests share: a runtime on a memory store (both closed after each test),
// and a bounded wait for a task to reach a state.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A runtime polling every 50 ms, quiet about tool errors, on `options.store` or a fresh memory store; closed after the test. */
export function testRuntime(options: Partial<TaskRuntimeOptions> = {}): TaskRuntime {
  const store = options.store ?? new MemoryTaskStore();
  const rt = new TaskRuntime({ pollIntervalMs: 50, onError: () => {}, ...options, store });
  cleanups.push(async () => {
    await rt.close();
    await store.close();
  });
  return rt;
}

/** The task once `done` holds for it; throws after 5 s. */
export async function until(rt: TaskRuntime, ref: TaskRef, done: (task: DetailedTask) => boolean): Promise<DetailedTask> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const task = await rt.get(ref);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task stayed ${task.status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Whether the task is terminal. */
export const ended = (task: DetailedTask): boolean => ['completed', 'failed', 'cancelled'].includes(task.status);
