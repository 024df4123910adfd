import type { SystemPromise, Violation } from './promise.js';

/** A CreateTaskResult is never answered for a task the database does not hold. */
export const createdTaskExists: SystemPromise = {
  name: 'created-task-exists',
  says: 'a CreateTaskResult is never answered for a task the database does not hold',
  check(index) {
    const violations: Violation[] = [];
    if (!index.finished) return { violations, checked: 0 };
    for (const task of index.tasks.values()) {
      if (!index.finalRows.has(task.id)) violations.push({ promise: this.name, taskId: task.id, message: `created (answered at ${task.create.t1}), not in the database at the end`, evidence: [task.create.seq] });
    }
    return { violations, checked: index.tasks.size };
  },
};
