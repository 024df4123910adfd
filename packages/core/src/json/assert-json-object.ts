import { InvalidTaskValueError } from '../errors/invalid-task-value-error.js';
import type { JsonObject } from './json-value.js';
import { hasLoneSurrogate } from './unicode-text.js';

/**
 * Checks that `value` is a plain JSON object that round-trips through JSON, holds only
 * well-formed Unicode text (no lone surrogate, in values or keys) and fits in `maxBytes` once
 * serialised, and returns it typed. Stores call this before they write, so a
 * bad value is refused with a typed error and nothing is stored.
 */
export function assertJsonObject(value: unknown, what: string, maxBytes: number): JsonObject {
  if (!isPlainObject(value)) {
    throw new InvalidTaskValueError(`${what} must be a JSON object`);
  }
  assertJsonTree(value, what, 0);
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidTaskValueError(`${what} is ${bytes} bytes; the limit is ${maxBytes}`);
  }
  return value as JsonObject;
}

const MAX_DEPTH = 64;

function assertJsonTree(value: unknown, what: string, depth: number): void {
  if (depth > MAX_DEPTH) throw new InvalidTaskValueError(`${what} is nested deeper than ${MAX_DEPTH} levels`);
  switch (typeof value) {
    case 'string':
      assertText(value, what);
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidTaskValueError(`${what} holds a number JSON cannot carry (${value})`);
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        for (const item of value) assertJsonTree(item, what, depth + 1);
        return;
      }
      if (!isPlainObject(value)) throw new InvalidTaskValueError(`${what} holds a non-JSON object (${describe(value)})`);
      for (const [key, item] of Object.entries(value)) {
        assertText(key, what);
        // undefined members vanish in JSON; storing them would make the read differ from the write.
        if (item === undefined) throw new InvalidTaskValueError(`${what} holds an undefined member`);
        assertJsonTree(item, what, depth + 1);
      }
      return;
    default:
      throw new InvalidTaskValueError(`${what} holds a ${typeof value}, which JSON cannot carry`);
  }
}

function assertText(text: string, what: string): void {
  if (hasLoneSurrogate(text)) {
    throw new InvalidTaskValueError(`${what} holds a lone UTF-16 surrogate, which is not valid Unicode text`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(value: object): string {
  return value.constructor?.name ?? 'object';
}
