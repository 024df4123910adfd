#!/usr/bin/env node
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate } from '../migrations/migrate.js';
import { DEFAULT_SCHEMA } from '../schema/schema-name.js';

const USAGE = `Usage: mcp-tasks migrate [--schema <name>]

Applies pending mcp-tasks migrations to the database of DATABASE_URL.
  --schema <name>   the schema to migrate (default ${DEFAULT_SCHEMA})`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { schema: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals[0] !== 'migrate' || positionals.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const connectionString = process.env['DATABASE_URL'];
  if (!connectionString) {
    console.error('mcp-tasks migrate: DATABASE_URL is not set');
    return 2;
  }
  const schema = values.schema ?? DEFAULT_SCHEMA;
  const pool = new pg.Pool({ connectionString, max: 1 });
  try {
    const { applied } = await migrate(pool, schema);
    console.log(applied.length === 0 ? `Schema ${schema} is up to date.` : `Applied to schema ${schema}: ${applied.join(', ')}`);
    return 0;
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('mcp-tasks migrate failed:', error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
