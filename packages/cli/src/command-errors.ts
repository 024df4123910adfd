import { ExitCode } from './exit-codes.js';

/** A mistake on the command line: reported without a stack, exit code 2. */
export class UsageError extends Error {
  readonly exitCode = ExitCode.usage;
  override readonly name = 'UsageError';
}

/** The command could not do its work for a reason the message explains (no stack), exit code 1. */
export class CommandError extends Error {
  readonly exitCode: number;
  override readonly name = 'CommandError';
  constructor(message: string, exitCode: number = ExitCode.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}
