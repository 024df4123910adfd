import type { CommandIo } from './command.js';

// C0 controls but newline and tab, DEL, and the C1 controls (U+009B is a one-character CSI).
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text from a server or a task row made safe to show on a terminal: control characters (escape
 * sequences could move the cursor, rewrite the screen or retitle the window) become U+FFFD.
 * Newlines and tabs stay where `multiline`, else they become spaces.
 */
export function printable(text: string, multiline = false): string {
  const safe = text.replace(CONTROL, '\ufffd');
  return multiline ? safe : safe.replace(/[\n\t]/g, ' ');
}

/**
 * `value` as JSON for `--json`: every character kept (a script reads what the server sent), but
 * DEL and the C1 controls, which JSON.stringify leaves raw, escaped as `\u00XX` like the others.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `io` with nothing in what it writes able to drive the terminal: the one gate every line of
 * `call` and `tools` passes, whichever server text it carries (a result, an error, a status).
 */
export function printableIo(io: CommandIo): CommandIo {
  return { ...io, out: (text) => io.out(printable(text, true)), err: (text) => io.err(printable(text, true)) };
}
