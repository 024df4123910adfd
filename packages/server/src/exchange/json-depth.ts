/**
 * How deep a request's JSON may nest (objects and arrays, the message itself counting one). MCP
 * messages need a handful of levels and tool arguments rarely a dozen; the store keeps values
 * nested at most 64 deep, so this bound (above it, with the message's own levels) refuses nothing
 * a task could hold. Past it a body is refused before anything walks it recursively
 * (`JSON.stringify`, schema validation), where a body nested 100 000 deep overflowed the stack
 * and ended in a 500.
 */
export const MAX_JSON_DEPTH = 100;

/** The sentence both refusals end with: what was wrong, without any of the value. */
export const TOO_DEEP = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * Whether JSON `text` nests deeper than `max`, read in one pass without parsing (brackets inside
 * strings do not count), so the check costs no more than the parse it guards and stops at the
 * first bracket past the bound.
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Whether a parsed value nests deeper than `max`, walked without recursion (a host may hand over
 * a body it parsed itself), stopping at the first container past the bound.
 */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ readonly value: object; readonly depth: number }> = [{ value, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.depth > max) return true;
    for (const child of Array.isArray(next.value) ? next.value : Object.values(next.value)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: next.depth + 1 });
    }
  }
  return false;
}
