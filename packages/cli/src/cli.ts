import { parseArgs } from 'node:util';
import { InvalidTaskValueError } from '@mcp-tasks/core';
import type { Command, CommandIo, CommandOptions, OptionValue } from './command.js';
import { commands } from './commands/index.js';
import { databaseOptions, DEFAULT_CONNECT_TIMEOUT_SECONDS } from './database/database-options.js';
import { ExitCode } from './exit-codes.js';
import { CommandError, UsageError } from './command-errors.js';
import { cliVersion } from './version.js';

const globalOptions: CommandOptions = {
  'database-url': { type: 'string' },
  'connect-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
};

function mainUsage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: mcp-tasks <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Options for every command:
  --database-url <url>    the PostgreSQL to use (default: DIRECT_DATABASE_URL, else DATABASE_URL)
  --connect-timeout <s>   give up connecting after this many seconds (default ${DEFAULT_CONNECT_TIMEOUT_SECONDS})
  -h, --help              this help, or a command's with mcp-tasks <command> --help
  -V, --version           the version of mcp-tasks

Exit codes: 0 done, 1 the command failed, 2 the command line is wrong,
3 status: migrations pending, 4 the database is ahead of this release,
5 call: the tool reported an error, 130 call: stopped by Ctrl-C.`;
}

/**
 * Runs one command line (without `node` and the script) and resolves to the exit code. Every
 * command's options are parsed in one strict pass, then those that belong to another command
 * are refused, so an option may come before or after the command name.
 */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  try {
    const all: CommandOptions = Object.assign({}, ...commands.map((c) => c.options), globalOptions);
    const { values, positionals } = parseArgs({ args: [...argv], options: all, allowPositionals: true, strict: true });
    if (values['version'] === true) {
      io.out(cliVersion());
      return ExitCode.ok;
    }
    const [name, ...rest] = positionals;
    if (name === undefined) {
      if (values['help'] === true) {
        io.out(mainUsage());
        return ExitCode.ok;
      }
      io.err(mainUsage());
      return ExitCode.usage;
    }
    const command = commands.find((c) => c.name === name);
    if (command === undefined) throw new UsageError(`unknown command ${JSON.stringify(name)}; see mcp-tasks --help`);
    if (values['help'] === true) {
      io.out(command.usage);
      return ExitCode.ok;
    }
    if (rest.length > 0 && command.positionals === undefined) throw new UsageError(`mcp-tasks ${command.name} takes no arguments (got ${JSON.stringify(rest[0])})`);
    const own = commandValues(command, values);
    const database = databaseOptions(stringValue(values['database-url']), env, stringValue(values['connect-timeout']));
    return await command.run({ values: own, positionals: rest, database, io, env });
  } catch (error) {
    return report(error, io);
  }
}

function commandValues(command: Command, values: Record<string, unknown>): Record<string, OptionValue> {
  const own: Record<string, OptionValue> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key in globalOptions) continue;
    if (!(key in command.options)) throw new UsageError(`mcp-tasks ${command.name} has no option --${key}; see mcp-tasks ${command.name} --help`);
    own[key] = value as OptionValue;
  }
  return own;
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function report(error: unknown, io: CommandIo): number {
  if (error instanceof UsageError || error instanceof CommandError) {
    io.err(`mcp-tasks: ${error.message}`);
    return error.exitCode;
  }
  const code = (error as { code?: unknown }).code;
  // parseArgs' own errors (unknown option, missing value) are usage errors.
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
    io.err(`mcp-tasks: ${(error as Error).message}; see mcp-tasks --help`);
    return ExitCode.usage;
  }
  if (error instanceof InvalidTaskValueError) {
    io.err(`mcp-tasks: ${(error as Error).message}`);
    return ExitCode.usage;
  }
  io.err(`mcp-tasks: ${error instanceof Error ? error.message : String(error)}`);
  return ExitCode.failed;
}
