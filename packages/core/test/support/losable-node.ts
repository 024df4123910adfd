import type { TaskEvents, TaskNode, TaskSignal } from '@mcp-tasks/core';

/**
 * A node over `events` whose signals a test can forge the way a node sends them when it gives its
 * runs up (its lease was lost, or it could not reach the database for a whole lease): `lose`
 * delivers a confirmed cancel while the row still says the run holds the task.
 */
export function losableNode(events: TaskEvents, nodeId: string): TaskNode & { lose(taskId: string): void } {
  const watchers = new Map<string, Set<(signal: TaskSignal) => void>>();
  return {
    nodeId,
    watch(taskId, listener) {
      const set = watchers.get(taskId) ?? new Set();
      set.add(listener);
      watchers.set(taskId, set);
      const inner = events.watch(taskId, listener);
      return () => {
        set.delete(listener);
        inner();
      };
    },
    follow: (ref, listener) => events.follow(ref, listener),
    followMany: (owner, ids, listener) => events.followMany(owner, ids, listener),
    stop: async () => {},
    lose(taskId) {
      for (const listener of watchers.get(taskId) ?? []) listener({ kind: 'cancelled', confirmed: true });
    },
  };
}
