import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigFileError } from './config-file-error.js';
import { gatewayConfigSchema, type GatewayFileConfig } from './config-schema.js';

/** A loaded configuration file and the folder its relative paths start from. */
export interface LoadedConfigFile {
  readonly file: string;
  readonly directory: string;
  readonly config: GatewayFileConfig;
}

/**
 * Reads, parses (YAML, of which JSON is a subset) and checks the file, with `${VAR}` in any string
 * replaced from `env`, before anything connects anywhere. Throws a {@link ConfigFileError}: one
 * sentence naming the file and the field.
 */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv): LoadedConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigFileError(`The configuration file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: false });
  } catch (error) {
    throw new ConfigFileError(`The configuration file ${file} is neither YAML nor JSON: ${firstLine(error)}.`);
  }
  const expanded = expand(raw ?? {}, [], file, env);
  const parsed = gatewayConfigSchema.safeParse(expanded);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigFileError(`The configuration file ${file} is invalid at ${fieldOf(issue.path)}: ${issue.message}.`);
  }
  return { file, directory: path.dirname(path.resolve(file)), config: parsed.data };
}

/** A field path as the file spells it: `upstreams[1].url`. */
export function fieldOf(at: readonly PropertyKey[]): string {
  if (at.length === 0) return '(the top level)';
  return at.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

/** `${VAR}` in strings, from the environment; an unset variable is an error naming the field (a secret left out must not become ""). */
function expand(value: unknown, at: PropertyKey[], file: string, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw new ConfigFileError(`The configuration file ${file} is invalid at ${fieldOf(at)}: the variable ${name} is not set.`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expand(item, [...at, index], file, env));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expand(item, [...at, key], file, env)]));
  return value;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.replace(/\.$/, '');
}
