import type { ParseArgsConfig } from 'node:util';
import type { DatabaseOptions } from './database/database-options.js';

/** The options a command declares, in node:util parseArgs form. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Where a command writes: the process's streams in the bin; anything else for an embedding program. */
export interface CommandIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** The user's terminal, for commands that ask questions, draw progress or stop on Ctrl-C (`call`). */
  readonly terminal?: CommandTerminal;
}

/** Where an interactive command meets its user. */
export interface CommandTerminal {
  readonly input: NodeJS.ReadableStream;
  /** Where progress and questions go (stderr in the bin, so stdout carries only results). */
  readonly output: NodeJS.WritableStream;
  /** Whether input and output are a terminal: a live progress line and typed answers, not plain lines. */
  readonly isTTY: boolean;
  readonly columns: () => number;
  /** Calls `handler` on each Ctrl-C (SIGINT) until the returned function is called. */
  readonly onInterrupt: (handler: () => void) => () => void;
}

/** A command's option values: a string, a flag, or the strings of a repeatable option. */
export type OptionValue = string | boolean | string[] | undefined;

/** What a command receives once the command line has been parsed. */
export interface CommandContext {
  /** This command's option values (global ones excluded). */
  readonly values: Readonly<Record<string, OptionValue>>;
  /** Positionals after the command name. */
  readonly positionals: readonly string[];
  readonly database: DatabaseOptions;
  readonly io: CommandIo;
  readonly env: NodeJS.ProcessEnv;
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
