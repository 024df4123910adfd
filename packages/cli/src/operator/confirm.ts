import { createInterface } from 'node:readline';
import type { CommandIo } from '../command.js';
import { UsageError } from '../command-errors.js';

/**
 * Asks the operator to confirm an action (`[y/N]`, anything but y or yes declines), unless
 * `--yes` was given. Without a terminal and without `--yes`, `required` actions (a bulk cancel)
 * are refused, so a script never cancels a filter's matches by accident; the others (one task
 * named by id) go on, as they did before confirmations existed.
 */
export async function confirmed(io: CommandIo, question: string, yes: boolean, required: boolean): Promise<boolean> {
  if (yes) return true;
  const terminal = io.terminal;
  if (!terminal?.isTTY) {
    if (required) throw new UsageError(`${question.replace(/\?$/, '')}: pass --yes to confirm without a terminal`);
    return true;
  }
  const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(`${question} [y/N] `, resolve);
      rl.once('close', () => resolve(''));
      rl.once('SIGINT', () => rl.close());
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}
