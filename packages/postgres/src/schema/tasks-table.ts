import type { ColumnType, Generated } from 'kysely';
import type { NodesTable } from './nodes-table.js';

/** A `tasks` row as pg returns it (bigint columns arrive as strings). */
export interface TasksTable {
  id: string;
  owner_subject: string;
  owner_server: string;
  owner_client_id: string;
  owner_resource: string;
  owner_key: string;
  tool: string;
  scopes: string[];
  status: string;
  status_message: string | null;
  created_at: Date;
  last_updated_at: Date;
  ttl_ms: ColumnType<string | null, number | null, number | null>;
  expires_at: Date | null;
  poll_interval_ms: ColumnType<string, number, number>;
  inputs: Generated<unknown>;
  input_keys: Generated<string[]>;
  result: unknown;
  error: unknown;
  node_id: string | null;
  followed: Generated<boolean>;
  attempt: Generated<number>;
  handovers: Generated<number>;
  resumable: Generated<boolean>;
  max_attempts: Generated<number>;
  args: unknown;
  client_capabilities: unknown;
  /** Migration 0011: the creating span's `traceparent`. */
  trace_context?: string | null;
  /**
   * Migration 0030: the partition key, the expiry an hourly partition holds the row by, or
   * 'infinity' (which node-postgres returns as the number `Infinity`). Written by the create
   * functions only; no statement of this package reads it but the sweeper's.
   */
  expiry_key?: Date | number;
}

/** A `task_steps` row (see migrations/0004_durable_work.sql, partitioned by 0035). */
export interface TaskStepsTable {
  task_id: string;
  name: string;
  seq: Generated<string>;
  starts: Generated<number>;
  done: Generated<boolean>;
  result: unknown;
  /** Its task's `expiry_key`, the partition it lives in (defaults to `'infinity'`). */
  expiry_key: Generated<Date | number>;
}

/** The tables of one mcp-tasks schema, for kysely. */
export interface TasksDatabase {
  tasks: TasksTable;
  nodes: NodesTable;
  task_steps: TaskStepsTable;
}

/** A selected `tasks` row. */
export type TaskRow = {
  [K in keyof TasksTable]: TasksTable[K] extends ColumnType<infer S, unknown, unknown> ? S : TasksTable[K];
};
