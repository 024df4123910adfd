import { assertSchemaName, migrate, migrationScript, migrationStatus } from '@mcp-tasks/postgres';
import type { Command } from '../command.js';
import { withPool } from '../database/with-pool.js';
import { ExitCode } from '../exit-codes.js';
import { schemaOf, schemaOption, schemaUsage } from './schema-option.js';
import { databaseAheadMessage } from './unknown-migrations.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply pending migrations (--print: show their SQL, apply nothing)',
  usage: `Usage: mcp-tasks migrate [--schema <name>] [--print]

Applies the migrations of this release that the database does not have yet, in one transaction
under an advisory lock (safe while nodes start). Refuses, with exit code 4, a database that has
migrations this release does not know.
${schemaUsage}
  --print                print the SQL that would be applied, as one psql script; apply nothing`,
  options: { ...schemaOption, print: { type: 'boolean' } },
  async run({ values, database, io }) {
    const schema = assertSchemaName(schemaOf(values));
    return withPool(database, async (pool) => {
      const status = await migrationStatus(pool, schema);
      if (status.unknown.length > 0) {
        io.err(databaseAheadMessage(schema, status.unknown));
        return ExitCode.databaseAhead;
      }
      if (values['print'] === true) {
        io.out(migrationScript(schema, status.pending));
        return ExitCode.ok;
      }
      const { applied } = await migrate(pool, schema);
      io.out(applied.length === 0 ? `Schema ${schema} is up to date.` : `Applied to schema ${schema}: ${applied.join(', ')}`);
      return ExitCode.ok;
    });
  },
};
