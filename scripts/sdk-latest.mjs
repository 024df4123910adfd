#!/usr/bin/env node
// Optional CI step (not part of .ci/run, which tests the pinned SDK): tries the newest 2.x of the
// MCP SDK against this code, to show when @mcp-tasks/server's peer range can widen.
//   npm run test:sdk-latest [-- test files…]
// It copies the repository (tracked and unignored files) to a temporary directory, points every
// @modelcontextprotocol/server and /client dependency at the newest 2.x, widens the peer range in
// the copy only, installs, type-checks, and runs the server-facing tests (or the files given)
// against DATABASE_URL or the database scripts/test.mjs would start. The working tree is never
// changed. Exit code: that of the first failing step; 0 means the newest 2.x passes.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (message) => process.stderr.write(`[sdk-latest] ${message}\n`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const SDK_PACKAGES = ['@modelcontextprotocol/server', '@modelcontextprotocol/client'];

function newest2x(name) {
  const out = execFileSync(npm, ['view', `${name}@2`, 'version', '--json'], { encoding: 'utf8' });
  const versions = [JSON.parse(out)].flat().filter((v) => !v.includes('-'));
  if (versions.length === 0) throw new Error(`no 2.x release of ${name}`);
  return versions.at(-1);
}

function step(label, command, args, cwd) {
  log(label);
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', env: process.env });
  if (result.status !== 0) throw Object.assign(new Error(`FAILED: ${label}`), { exitCode: result.status ?? 1 });
}

const latest = Object.fromEntries(SDK_PACKAGES.map((name) => [name, newest2x(name)]));
const serverPackage = JSON.parse(readFileSync(path.join(root, 'packages/server/package.json'), 'utf8'));
const peerRange = serverPackage.peerDependencies['@modelcontextprotocol/server'];
log(`peer range today: ${peerRange}; newest 2.x: ${Object.entries(latest).map(([n, v]) => `${n}@${v}`).join(', ')}`);

const copy = mkdtempSync(path.join(os.tmpdir(), 'mcp-tasks-sdk-latest-'));
const keep = process.argv.includes('--keep');
const files = process.argv.slice(2).filter((arg) => arg !== '--keep');
try {
  const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of tracked) cpSync(path.join(root, file), path.join(copy, file), { recursive: true, errorOnExist: false });

  const manifests = ['package.json', ...readdirSync(path.join(copy, 'packages')).map((p) => path.join('packages', p, 'package.json'))];
  for (const manifest of manifests) {
    const file = path.join(copy, manifest);
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    for (const field of ['dependencies', 'devDependencies']) {
      for (const name of SDK_PACKAGES) if (pkg[field]?.[name]) pkg[field][name] = latest[name];
    }
    if (pkg.peerDependencies?.['@modelcontextprotocol/server']) pkg.peerDependencies['@modelcontextprotocol/server'] = `>=${peerRange.replace(/^[~^]/, '')} <3`;
    writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  }
  rmSync(path.join(copy, 'package-lock.json'), { force: true });

  step('npm install (newest 2.x SDK)', npm, ['install', '--no-audit', '--no-fund', '--prefer-offline'], copy);
  step('type-check', npm, ['run', 'typecheck'], copy);
  const defaults = readdirSync(path.join(copy, 'test'))
    .filter((name) => /^(server-|notifications-|auth-|conformance)/.test(name) && name.endsWith('.test.ts'))
    .map((name) => path.join('test', name));
  step('server tests', process.execPath, ['scripts/test.mjs', ...(files.length > 0 ? files : defaults)], copy);
  log(`newest 2.x passes: the peer range (${peerRange}) can widen to include ${latest['@modelcontextprotocol/server']}`);
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = error?.exitCode ?? 1;
} finally {
  if (keep) log(`kept ${copy}`);
  else rmSync(copy, { recursive: true, force: true });
}
