import type { SystemPromise, Violation } from './promise.js';

/**
 * No owner ever sees, answers or cancels another owner's task: a request naming another owner's
 * task gets no result, a list shows none of them, a follower is told nothing of them, and every
 * row carries its creator's subject.
 */
export const ownerIsolation: SystemPromise = {
  name: 'owner-isolation',
  says: "no owner ever sees, answers or cancels another owner's task",
  check(index) {
    const violations: Violation[] = [];
    let checked = 0;
    for (const [taskId, requests] of index.requests) {
      const owner = index.ownerOf(taskId);
      if (owner === undefined) continue;
      for (const request of requests) {
        if (request.owner === owner) continue;
        checked++;
        if (request.result && !request.error) {
          violations.push({ promise: this.name, taskId, message: `${request.owner} got an answer to ${request.method} on ${owner}'s task`, evidence: [index.tasks.get(taskId)!.create.seq, request.seq] });
        }
      }
    }
    for (const list of index.lists) {
      checked++;
      for (const entry of (list.result?.['tasks'] as any[] | undefined) ?? []) {
        const owner = index.ownerOf(entry?.taskId);
        if (owner !== undefined && owner !== list.owner) {
          violations.push({ promise: this.name, taskId: entry.taskId, message: `${list.owner}'s tasks/list shows ${owner}'s task`, evidence: [index.tasks.get(entry.taskId)!.create.seq, list.seq] });
        }
      }
    }
    for (const note of index.notifications) {
      checked++;
      const owner = index.ownerOf(note.taskId);
      if (owner !== undefined && owner !== note.owner) {
        violations.push({ promise: this.name, taskId: note.taskId, message: `${note.owner} was told ${owner}'s task is ${note.status}`, evidence: [index.tasks.get(note.taskId)!.create.seq, note.seq] });
      }
    }
    const subjects = new Map((index.run?.owners ?? []).map((o) => [o.label, o.sub]));
    for (const task of index.tasks.values()) {
      const final = index.finalRows.get(task.id);
      const sub = subjects.get(task.owner);
      if (!final || !sub) continue;
      checked++;
      if (final.row.owner_subject !== sub) {
        violations.push({ promise: this.name, taskId: task.id, message: `created by ${task.owner} (${sub}), the row's owner is ${final.row.owner_subject}`, evidence: [task.create.seq, final.seq] });
      }
    }
    return { violations, checked };
  },
};
