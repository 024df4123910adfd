/**
 * Text from a server or a task row made safe to show on a terminal: control characters (escape
 * sequences could move the cursor, rewrite the screen or retitle the window) become U+FFFD.
 * Newlines and tabs stay where `multiline`, else they become spaces.
 */
export function printable(text: string, multiline = false): string {
  const safe = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
  return multiline ? safe : safe.replace(/[\n\t]/g, ' ');
}
