// The supported Node lines: every installed package (dev ones too, `npm install` checks them all)
// runs on the oldest Node the root's `engines` names, so `npm install` on Node 20 does not warn
// EBADENGINE. The root (the development tree) needs 20.18.1 (undici 7, of testcontainers and the
// conformance suite); the published packages keep >=20.10. content-type 3 asks for Node 22; @octokit/request (through the conformance suite)
// is pinned to content-type 2 by the root's `overrides`, which has the same `parse`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/demo-process.js';

/** The lowest `major.minor` a `>=A.B` (or `>=A`, `^A`) range admits; undefined for a range this test does not read. */
function lowest(range: string): [number, number] | undefined {
  const match = /^(?:>=|\^)?\s*(\d+)(?:\.(\d+))?/.exec(range.trim());
  return match ? [Number(match[1]), Number(match[2] ?? 0)] : undefined;
}

/** Whether Node `version` meets `range`: each `||` branch is a lower bound, optionally with an upper `<`. */
function admits(range: string, [major, minor]: [number, number]): boolean {
  return range.split('||').some((branch) => {
    const parts = branch.trim().split(/\s+/);
    return parts.every((part) => {
      const upper = /^<(\d+)/.exec(part);
      if (upper) return major < Number(upper[1]);
      if (part === '*' || part === '') return true;
      const bound = lowest(part);
      if (!bound) return true;
      if (part.startsWith('^')) return major === bound[0] && minor >= bound[1];
      return major > bound[0] || (major === bound[0] && minor >= bound[1]);
    });
  });
}

function* packageFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const folder = path.join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      yield* packageFiles(folder);
      continue;
    }
    const file = path.join(folder, 'package.json');
    if (existsSync(file)) yield file;
    const nested = path.join(folder, 'node_modules');
    if (existsSync(nested)) yield* packageFiles(nested);
  }
}

describe('the supported Node lines', () => {
  it('every installed package runs on the oldest Node the root supports', () => {
    const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const oldest = lowest(root.engines.node)!;
    assert.equal(oldest[0], 20, 'Node 20 stays supported (the machines and CI run it)');
    const refusing: string[] = [];
    for (const file of packageFiles(path.join(ROOT, 'node_modules'))) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string; engines?: { node?: unknown } };
      const wanted = pkg.engines?.node;
      if (typeof wanted === 'string' && !admits(wanted, oldest)) refusing.push(`${pkg.name}@${pkg.version} wants node ${wanted} (${path.relative(ROOT, file)})`);
    }
    assert.deepEqual(refusing, []);
  });
});
