#!/usr/bin/env node
// Removes compiled files in packages/*/dist whose source in src/ is gone. tsc -b never deletes the
// output of a renamed or removed file, and `npm pack` ships whatever dist holds, so stale modules
// would be published (and stay importable). Also removes dist/.tsbuildinfo, where builds before the
// packages were publishable kept tsc's build info (now beside tsconfig.json), so a checkout built
// back then packs clean. Run by build, prepare and typecheck, before tsc -b.
import { existsSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = /\.(?:js|js\.map|d\.ts|d\.ts\.map)$/;

async function prune(dist, src) {
  let removed = 0;
  for (const entry of await readdir(dist, { withFileTypes: true })) {
    const output = path.join(dist, entry.name);
    if (entry.isDirectory()) {
      removed += await prune(output, path.join(src, entry.name));
      if ((await readdir(output)).length === 0) await rmdir(output);
    } else if (OUTPUT.test(entry.name) && !existsSync(path.join(src, `${entry.name.replace(OUTPUT, '')}.ts`))) {
      await rm(output);
      removed += 1;
    }
  }
  return removed;
}

for (const pkg of await readdir(path.join(root, 'packages'))) {
  const dist = path.join(root, 'packages', pkg, 'dist');
  if (!existsSync(dist)) continue;
  const legacyBuildInfo = path.join(dist, '.tsbuildinfo');
  const hadLegacy = existsSync(legacyBuildInfo);
  if (hadLegacy) await rm(legacyBuildInfo);
  const removed = (hadLegacy ? 1 : 0) + (await prune(dist, path.join(root, 'packages', pkg, 'src')));
  if (removed > 0) console.log(`removed ${removed} stale file(s) from packages/${pkg}/dist`);
}
