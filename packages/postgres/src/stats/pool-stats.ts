import { connectionOf } from '../postgres-task-store.js';
import type { PostgresTaskStore } from '../postgres-task-store.js';

/** A store's pool now: its connections, the idle ones, and the queries waiting for one. */
export interface PoolStats {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
}

/** The pool of `store` (its own or the application's), for a node's gauges: a queue here is what a slow request waited on. */
export function poolStats(store: PostgresTaskStore): PoolStats {
  const { pool } = connectionOf(store);
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
