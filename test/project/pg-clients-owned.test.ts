// Every pg pool and client a test opens comes from test/support/pg-clients.ts, which gives it an
// `error` listener. One opened by hand had none: the file's database dropped at teardown ended its
// idle connection, and "terminating connection due to administrator command" became an uncaught
// exception that failed test/isolation/limits.test.ts after its tests had passed (1 run in 2).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/demo-process.js';

/** Where tests live, and what may open pg connections by hand there. */
const ROOTS = ['test', ...readdirSync(path.join(ROOT, 'packages')).map((name) => path.join('packages', name, 'test'))];
const ALLOWED = new Set([
  // The owner itself.
  'test/support/pg-clients.ts',
  // A packaging fixture that is type-checked against the packed tarball, never run.
  'test/fixtures/packed-consumer/index.ts',
  // This file: its detector's samples.
  'test/project/pg-clients-owned.test.ts',
]);

/** The places in `source` that open a pg pool or client by hand. */
function handOpened(source: string): string[] {
  const found = [...source.matchAll(/new pg\.(Pool|Client)\(/g)].map((match) => match[0]);
  // `import { Pool } from 'pg'` (or Client), then `new Pool(`.
  const named = /import\s*\{([^}]*)\}\s*from\s*'pg'/.exec(source)?.[1] ?? '';
  for (const name of ['Pool', 'Client']) {
    if (new RegExp(`\\b${name}\\b`).test(named)) found.push(...[...source.matchAll(new RegExp(`new ${name}\\(`, 'g'))].map((match) => match[0]));
  }
  return found;
}

function sources(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(path.join(ROOT, dir));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const relative = path.join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(path.join(ROOT, relative)).isDirectory()) return sources(relative);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [relative] : [];
  });
}

test('the detector finds a pool or client opened by hand, and not the helpers', () => {
  assert.deepEqual(handOpened("const pool = new pg.Pool({ connectionString });"), ['new pg.Pool(']);
  assert.deepEqual(handOpened("import { Client } from 'pg';\nconst c = new Client(url);"), ['new Client(']);
  // The MCP SDK's Client is no pg client.
  assert.deepEqual(handOpened("import { Client } from '@modelcontextprotocol/sdk/client/index.js';\nnew Client(info);"), []);
  assert.deepEqual(handOpened('const pool = testPool({ connectionString });'), []);
});

test('no test opens a pg pool or client by hand: each comes from test/support/pg-clients.ts, with an error listener', { timeout: 30_000 }, () => {
  const offenders = ROOTS.flatMap(sources)
    .filter((file) => !ALLOWED.has(file.split(path.sep).join('/')))
    .flatMap((file) => handOpened(readFileSync(path.join(ROOT, file), 'utf8')).map((what) => `${file}: ${what}`));
  assert.deepEqual(offenders, [], 'use testPool/testClient from test/support/pg-clients.ts');
});
