import type { ParseArgsConfig } from 'node:util';
import type { DatabaseOptions } from './database/database-options.js';

/** The options a command declares, in node:util parseArgs form. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Where a command writes: the process's streams in the bin; anything else for an embedding program. */
export interface CommandIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** What a command receives once the command line has been parsed. */
export interface CommandContext {
  /** This command's option values (global ones excluded). */
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  /** Positionals after the command name. */
  readonly positionals: readonly string[];
  readonly database: DatabaseOptions;
  readonly io: CommandIo;
}

/** One `mcp-tasks <name>` command; each lives in its own file under commands/. */
export interface Command {
  readonly name: string;
  /** One line for the command list of `--help`. */
  readonly summary: string;
  /** The full help of `mcp-tasks <name> --help`. */
  readonly usage: string;
  readonly options: CommandOptions;
  /** What the positionals after the command name are, for usage; absent: the command takes none. */
  readonly positionals?: string;
  /** Resolves to the exit code. */
  run(context: CommandContext): Promise<number>;
}
