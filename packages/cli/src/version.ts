import { readFileSync } from 'node:fs';

/** The version of this package (dist/ and src/ both sit one level below package.json). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
