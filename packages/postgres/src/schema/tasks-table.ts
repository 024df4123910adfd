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
}

/** The tables of one mcp-tasks schema, for kysely. */
export interface TasksDatabase {
  tasks: TasksTable;
  nodes: NodesTable;
}

/** A selected `tasks` row. */
export type TaskRow = {
  [K in keyof TasksTable]: TasksTable[K] extends ColumnType<infer S, unknown, unknown> ? S : TasksTable[K];
};
