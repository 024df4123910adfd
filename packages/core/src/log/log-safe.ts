/** Longest message a log line keeps of an error; the rest is counted, not written. */
const MAX_MESSAGE_LENGTH = 1_000;

/**
 * An error (or any value) as one log record a client cannot forge: its message is where clients'
 * values end up (an id, a tool name, a header), so control characters are escaped (`\\n`, `\\u0000`…)
 * and a long message is cut, saying how much was left out. Stack frames come from the code, not
 * from a client, and are kept as they are.
 */
export function logSafe(error: unknown, maxLength = MAX_MESSAGE_LENGTH): string {
  if (!(error instanceof Error)) return escapeControls(truncate(String(error), maxLength));
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const head = `${error.name}: ${escapeControls(truncate(error.message, maxLength))}`;
  const cause = error.cause === undefined ? '' : `\n  cause: ${logSafe(error.cause, maxLength)}`;
  return [head, ...frames].join('\n') + cause;
}

function truncate(text: string, maxLength: number): string {
  return text.length <= maxLength ? text : `${text.slice(0, maxLength)}… (${text.length - maxLength} more characters)`;
}

function escapeControls(text: string): string {
  // C0 and C1 controls, DEL, and the line and paragraph separators some log viewers break on.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
