import type { CreateOptions, NewTask, TaskRecord, TaskStore } from '@mcp-tasks/core';

/** A store that counts the tasks created through it (for `mcp_tasks_created_total`). */
export function countingStore(store: TaskStore, onCreate: (record: TaskRecord) => void): TaskStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'create') {
        return async (task: NewTask, options: CreateOptions) => {
          const record = await target.create(task, options);
          onCreate(record);
          return record;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
