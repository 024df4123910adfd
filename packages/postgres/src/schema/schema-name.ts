import { InvalidTaskValueError } from '@mcp-tasks/core';

/** The schema used when none is configured. */
export const DEFAULT_SCHEMA = 'mcp_tasks';

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/;

/**
 * Checks a configured schema name. It is restricted to lower-case identifier characters so it can
 * be spliced into identifiers and the NOTIFY channel name without any quoting surprises, and kept
 * short enough that `<schema>_control` stays within PostgreSQL's 63-byte identifier limit.
 */
export function assertSchemaName(schema: string): string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema)) {
    throw new InvalidTaskValueError(`schema must match ${SCHEMA_PATTERN} (got ${JSON.stringify(schema)})`);
  }
  return schema;
}
