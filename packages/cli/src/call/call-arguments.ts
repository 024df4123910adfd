import { UsageError } from '../command-errors.js';
import type { JsonObject } from './mcp-http-client.js';

/**
 * The tool's arguments from `--args JSON` and each `--arg key=value` (which win). A value is
 * read as JSON (a number, a boolean, an object…) only when the tool's input schema says the
 * property is not a string, so `--arg name=007` stays the string "007" for a string property.
 */
export function callArguments(pairs: readonly string[], json: string | undefined, inputSchema: JsonObject | undefined): JsonObject {
  let args: JsonObject = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as JsonObject;
    } catch (error) {
      throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new UsageError('--args must be a JSON object, e.g. --args \'{"files": 5}\'');
  }
  const properties = (inputSchema?.['properties'] ?? {}) as Record<string, JsonObject>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg takes key=value (got ${JSON.stringify(pair)})`);
    const key = pair.slice(0, eq);
    args[key] = typedValue(key, pair.slice(eq + 1), properties[key]);
  }
  return args;
}

function typedValue(key: string, raw: string, schema: JsonObject | undefined): unknown {
  const types = schemaTypes(schema);
  if (types.size === 0 || types.has('string')) return raw;
  if (types.has('integer') || types.has('number')) {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--arg ${key} must be a number (got ${JSON.stringify(raw)})`);
    if (!types.has('number') && !Number.isInteger(value)) throw new UsageError(`--arg ${key} must be an integer (got ${JSON.stringify(raw)})`);
    return value;
  }
  if (types.has('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  if (types.has('null') && raw === 'null') return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new UsageError(`--arg ${key} must be JSON of type ${[...types].join(' or ')} (got ${JSON.stringify(raw)})`);
  }
}

/** The JSON types a property allows (`type`, or the types of its `anyOf`/`oneOf` branches); empty: unknown. */
function schemaTypes(schema: JsonObject | undefined): Set<string> {
  const types = new Set<string>();
  if (schema === undefined) return types;
  const type = schema['type'];
  if (typeof type === 'string') types.add(type);
  if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') types.add(t);
  for (const branch of [...((schema['anyOf'] as JsonObject[] | undefined) ?? []), ...((schema['oneOf'] as JsonObject[] | undefined) ?? [])]) {
    for (const t of schemaTypes(branch)) types.add(t);
  }
  if (Array.isArray(schema['enum']) && schema['enum'].some((v) => typeof v === 'string')) types.add('string');
  return types;
}

/**
 * The arguments checked against the tool's input schema before the call, so that a mistake is
 * told in the terms of the command line (the argument, its type, how to pass it) rather than as
 * the server's validator words it: a missing required argument, a value of the wrong type, an
 * argument the tool does not take. Only what the schema's top level says is checked; the server
 * checks the rest.
 */
export function checkArguments(tool: string, args: JsonObject, inputSchema: JsonObject | undefined): void {
  if (inputSchema === undefined) return;
  const properties = (inputSchema['properties'] ?? {}) as Record<string, JsonObject>;
  const required = Array.isArray(inputSchema['required']) ? (inputSchema['required'] as unknown[]).filter((name): name is string => typeof name === 'string') : [];
  const missing = required.filter((name) => !(name in args));
  if (missing.length > 0) {
    throw new UsageError(
      missing.map((name) => `${tool} needs the argument ${name} (${describeType(properties[name])}): pass --arg ${name}=…`).join('\n'),
    );
  }
  if (inputSchema['additionalProperties'] === false) {
    const unknown = Object.keys(args).filter((name) => !(name in properties));
    if (unknown.length > 0) throw new UsageError(`${tool} takes no argument ${unknown.map((name) => JSON.stringify(name)).join(', ')}; it takes ${Object.keys(properties).join(', ') || 'none'}`);
  }
  for (const [name, value] of Object.entries(args)) {
    const types = schemaTypes(properties[name]);
    if (types.size === 0 || fits(value, types)) continue;
    throw new UsageError(`the argument ${name} of ${tool} must be ${describeType(properties[name])} (got ${JSON.stringify(value)})`);
  }
}

function fits(value: unknown, types: Set<string>): boolean {
  if (value === null) return types.has('null');
  if (Array.isArray(value)) return types.has('array');
  if (typeof value === 'number') return types.has('number') || (types.has('integer') && Number.isInteger(value));
  return types.has(typeof value);
}

/** A property's type as the user reads it: `a string`, `an integer from 1 to 500`, `one of "a", "b"`. */
export function describeType(schema: JsonObject | undefined): string {
  if (schema === undefined) return 'any value';
  if (Array.isArray(schema['enum'])) return `one of ${(schema['enum'] as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
  const types = [...schemaTypes(schema)];
  if (types.length === 0) return 'any value';
  const named = types.map((type) => (type === 'integer' || type === 'array' || type === 'object' ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`)).join(' or ');
  const min = schema['minimum'] ?? schema['exclusiveMinimum'];
  const max = schema['maximum'] ?? schema['exclusiveMaximum'];
  const range = typeof min === 'number' && typeof max === 'number' ? ` from ${min} to ${max}` : typeof min === 'number' ? ` of at least ${min}` : typeof max === 'number' ? ` of at most ${max}` : '';
  const description = typeof schema['description'] === 'string' ? `: ${schema['description']}` : '';
  return `${named}${range}${description}`;
}
