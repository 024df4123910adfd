import { assertSchemaName, migrationStatus } from '@mcp-tasks/postgres';
import type { Command } from '../command.js';
import { withPool } from '../database/with-pool.js';
import { ExitCode } from '../exit-codes.js';
import { schemaOf, schemaOption, schemaUsage } from './schema-option.js';
import { databaseAheadMessage } from './unknown-migrations.js';

export const statusCommand: Command = {
  name: 'status',
  summary: 'show applied and pending migrations',
  usage: `Usage: mcp-tasks status [--schema <name>]

Lists the migrations applied to the schema and those of this release still pending. Exit code 0
when up to date, 3 when migrations are pending, 4 when the database is ahead of the code.
${schemaUsage}`,
  options: schemaOption,
  async run({ values, database, io }) {
    const schema = assertSchemaName(schemaOf(values));
    return withPool(database, async (pool) => {
      const status = await migrationStatus(pool, schema);
      const lines = [`Schema ${schema}:`];
      for (const m of status.applied) lines.push(`  applied  ${m.name}  ${m.appliedAt.toISOString()}`);
      for (const m of status.pending) lines.push(`  pending  ${m.name}`);
      for (const m of status.unknown) lines.push(`  unknown  ${m.name}  ${m.appliedAt.toISOString()}`);
      if (status.unknown.length > 0) {
        lines.push(databaseAheadMessage(schema, status.unknown));
        io.out(lines.join('\n'));
        return ExitCode.databaseAhead;
      }
      lines.push(status.pending.length === 0 ? 'Up to date.' : `${status.pending.length} pending: run mcp-tasks migrate`);
      io.out(lines.join('\n'));
      return status.pending.length === 0 ? ExitCode.ok : ExitCode.pending;
    });
  },
};
