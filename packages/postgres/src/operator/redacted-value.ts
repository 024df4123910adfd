/** A value an owner gave or got, as an operator sees it without revealing it: its keys and its size. */
export type RedactedValue = { readonly keys?: string[]; readonly bytes: number };

/**
 * What an operator is shown of a value an owner gave or got (an answer, a result, an error): its
 * keys and its size unless `reveal`. An operator sees that there is data, not what it is. Shared
 * by `tasks show` and the console, so both hide the same things.
 */
export function redactedValue(value: unknown, reveal: boolean): unknown {
  if (value === null || value === undefined) return value;
  if (reveal) return value;
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  return typeof value === 'object' && !Array.isArray(value) ? { keys: Object.keys(value as object), bytes } : { bytes };
}
