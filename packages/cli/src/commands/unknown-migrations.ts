import type { AppliedMigration } from '@mcp-tasks/postgres';

/** The sentence for a database that a newer release migrated. */
export function databaseAheadMessage(schema: string, unknown: readonly AppliedMigration[]): string {
  return `database ahead of the code: schema ${schema} has migrations this release does not know (${unknown.map((m) => m.name).join(', ')}); run a release that has them`;
}
