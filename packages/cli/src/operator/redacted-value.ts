import { redactedValue, type RedactedValue } from '@mcp-tasks/postgres';

export { redactedValue };

/** The one-line form of {@link redactedValue}. */
export function describeValue(value: unknown, reveal: boolean): string {
  if (value === null || value === undefined) return 'none';
  if (reveal) return JSON.stringify(value);
  const redacted = redactedValue(value, false) as RedactedValue;
  return `${redacted.keys ? `keys ${redacted.keys.join(', ') || '(none)'}; ` : ''}${redacted.bytes} bytes (--reveal shows it)`;
}
