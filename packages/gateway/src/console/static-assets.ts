import { readFileSync } from 'node:fs';

/** One file of the console's page, as served. */
export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** Whether an asset may be served before sign-in: the stylesheet of the login page, nothing with data or code. */
export const PUBLIC_ASSETS = new Set(['console.css']);

const TYPES: Record<string, string> = {
  'console.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

/**
 * The console's page: plain files in the demo package's `console/` folder (beside `src/` and
 * `dist/`, so the same path works from both), read once. No build step and nothing from the
 * internet: the node serves all of it.
 */
export function loadStaticAssets(): ReadonlyMap<string, StaticAsset> {
  const folder = new URL('../../console/', import.meta.url);
  return new Map(Object.entries(TYPES).map(([name, contentType]) => [name, { body: readFileSync(new URL(name, folder)), contentType }]));
}
