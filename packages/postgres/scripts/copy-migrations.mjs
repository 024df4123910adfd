#!/usr/bin/env node
// Copies the repository's migrations/*.sql (the source of truth) into this package, so the
// published package carries them and works without the repository around it.
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.resolve(packageRoot, '../../migrations');
const target = path.join(packageRoot, 'migrations');

await rm(target, { recursive: true, force: true });
await mkdir(target, { recursive: true });
const files = (await readdir(source)).filter((name) => name.endsWith('.sql'));
for (const name of files) await copyFile(path.join(source, name), path.join(target, name));
console.log(`copied ${files.length} migration(s) into ${path.relative(process.cwd(), target) || target}`);
