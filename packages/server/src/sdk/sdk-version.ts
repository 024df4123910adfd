import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

let cached: string | undefined;

/**
 * The version of the installed `@modelcontextprotocol/server`, for error messages. Its exports
 * do not include `package.json`, so the file is found from the resolved entry point.
 */
export function installedSdkVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  try {
    let dir = path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server'));
    for (let depth = 0; depth < 4; depth += 1, dir = path.dirname(dir)) {
      try {
        const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
        if (manifest.name === '@modelcontextprotocol/server' && typeof manifest.version === 'string') {
          cached = manifest.version;
          break;
        }
      } catch {
        // Not this directory: look one up.
      }
    }
  } catch {
    // Resolution failed (a bundle): the version stays unknown.
  }
  return cached;
}
