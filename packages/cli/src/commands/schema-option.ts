import { DEFAULT_SCHEMA } from '@mcp-tasks/postgres';
import type { CommandOptions, OptionValue } from '../command.js';

/** `--schema`, shared by the commands that work on one mcp-tasks schema. */
export const schemaOption: CommandOptions = { schema: { type: 'string' } };

export const schemaUsage = `  --schema <name>        the schema of the mcp-tasks tables (default ${DEFAULT_SCHEMA})`;

export function schemaOf(values: Readonly<Record<string, OptionValue>>): string {
  const schema = values['schema'];
  return typeof schema === 'string' ? schema : DEFAULT_SCHEMA;
}
