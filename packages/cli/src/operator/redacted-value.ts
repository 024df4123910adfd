/**
 * What `tasks show` prints of a value an owner gave or got (an answer, a result, an error):
 * its keys and its size unless `--reveal`. An operator sees that there is data, not what it is.
 */
export function redactedValue(value: unknown, reveal: boolean): unknown {
  if (value === null || value === undefined) return value;
  if (reveal) return value;
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  return typeof value === 'object' && !Array.isArray(value) ? { keys: Object.keys(value as object), bytes } : { bytes };
}

/** The one-line form of {@link redactedValue}. */
export function describeValue(value: unknown, reveal: boolean): string {
  if (value === null || value === undefined) return 'none';
  if (reveal) return JSON.stringify(value);
  const redacted = redactedValue(value, false) as { keys?: string[]; bytes: number };
  return `${redacted.keys ? `keys ${redacted.keys.join(', ') || '(none)'}; ` : ''}${redacted.bytes} bytes (--reveal shows it)`;
}
