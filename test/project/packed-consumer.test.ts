// A stranger's view of the packages: only what `npm pack` puts in the tarballs, installed into a
// fresh project (from the npm cache the workspace install filled, so it needs no network when the
// cache is warm), type-checked strict with skipLibCheck off, run against PostgreSQL, bundled with
// esbuild and run with no node_modules beside the bundle. The examples (standalone server, client)
// are installed the same way and run against each other.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixtures = path.join(root, 'test/fixtures/packed-consumer');
const PUBLISHED = ['core', 'postgres', 'server', 'cli'] as const;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command with a bound; resolves with its exit code instead of rejecting on failure. */
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Result> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error as { killed?: boolean }).killed) return reject(new Error(`${command} ${args.join(' ')} was killed after ${options.timeoutMs} ms`));
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const installedVersion = async (name: string) =>
  (JSON.parse(await readFile(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

interface PackedFile {
  readonly path: string;
}
interface Packed {
  readonly name: string;
  readonly filename: string;
  readonly files: readonly PackedFile[];
}

describe('packages installed from their npm pack tarballs', { timeout: 420_000 }, () => {
  let work: string;
  let consumer: string;
  let database: TestDatabase;
  let packed: Packed[];

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'mcp-tasks-packed-'));
    consumer = path.join(work, 'consumer');
    await mkdir(consumer);
    database = await createTestDatabase();
    const args = ['pack', '--json', '--pack-destination', work, ...PUBLISHED.flatMap((p) => ['--workspace', `packages/${p}`])];
    const pack = await run(npm, args, { cwd: root, timeoutMs: 120_000 });
    assert.equal(pack.code, 0, pack.stderr);
    packed = JSON.parse(pack.stdout) as Packed[];
    assert.equal(packed.length, PUBLISHED.length);
  });
  after(async () => {
    await database?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('each tarball carries README.md and LICENSE, no .tsbuildinfo, no build scripts, and nothing stale in dist', async () => {
    const license = await readFile(path.join(root, 'LICENSE'), 'utf8');
    assert.match(license, /^MIT License/);
    for (const name of PUBLISHED) {
      const tarball = packed.find((p) => p.name === `@mcp-tasks/${name}`);
      assert.ok(tarball, `@mcp-tasks/${name} was packed`);
      const files = tarball.files.map((f) => f.path);
      assert.ok(files.includes('README.md'), `${tarball.name} has README.md`);
      assert.ok(files.includes('LICENSE'), `${tarball.name} has LICENSE`);
      assert.equal(await readFile(path.join(root, 'packages', name, 'LICENSE'), 'utf8'), license, `${tarball.name}'s LICENSE is the repository's`);
      assert.deepEqual(files.filter((f) => f.endsWith('.tsbuildinfo')), [], `${tarball.name} has no .tsbuildinfo`);
      assert.deepEqual(files.filter((f) => f.startsWith('scripts/') || f.startsWith('test/')), [], `${tarball.name} has no scripts or tests`);
      // tsc -b never deletes output of removed sources (scripts/prune-dist.mjs does); a tarball must not ship it.
      const sources = new Set(files.filter((f) => f.startsWith('src/') && f.endsWith('.ts')).map((f) => f.slice('src/'.length, -'.ts'.length)));
      const stale = files.filter((f) => f.startsWith('dist/') && f.endsWith('.js') && !sources.has(f.slice('dist/'.length, -'.js'.length)));
      assert.deepEqual(stale, [], `${tarball.name} ships output without a source (rm -rf packages/*/dist && npm run build)`);
    }
  });

  it('each package.json has repository, engines, publishConfig.access public, files, and no lifecycle scripts', async () => {
    for (const name of PUBLISHED) {
      const pkg = JSON.parse(await readFile(path.join(root, 'packages', name, 'package.json'), 'utf8')) as Record<string, unknown>;
      const repository = pkg['repository'] as { url?: string; directory?: string } | undefined;
      assert.match(repository?.url ?? '', /^git\+https:\/\//, `${name}: repository.url`);
      assert.equal(repository?.directory, `packages/${name}`);
      assert.ok((pkg['engines'] as { node?: string } | undefined)?.node, `${name}: engines.node`);
      assert.deepEqual(pkg['publishConfig'], { access: 'public' });
      assert.ok(Array.isArray(pkg['files']), `${name}: files`);
      assert.equal(pkg['scripts'], undefined, `${name}: no scripts`);
      assert.equal(pkg['private'], undefined, `${name}: publishable`);
      const exports = JSON.stringify(pkg['exports'] ?? {});
      assert.doesNotMatch(exports, /"source"/, `${name}: no bare "source" export condition`);
    }
  });

  it("@mcp-tasks/server's SDK peer range admits the SDK version the tests run against", async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'packages/server/package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const range = pkg.peerDependencies['@modelcontextprotocol/server'];
    const match = /^~(\d+)\.(\d+)\.(\d+)$/.exec(range ?? '');
    assert.ok(match, `peer range ${range} is a ~X.Y.Z range`);
    const [major, minor, patch] = (await installedVersion('@modelcontextprotocol/server')).split('.').map(Number);
    assert.equal(major, Number(match[1]));
    assert.equal(minor, Number(match[2]), 'the peer range is the minor CI tests');
    assert.ok(patch! >= Number(match[3]));
  });

  it('a fresh project installs the tarballs, type-checks strict with skipLibCheck off, runs, survives --conditions=source and bundling', async () => {
    await writeFile(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2));
    const peers = await Promise.all(['@modelcontextprotocol/server', 'zod', 'typescript', '@types/node', 'esbuild'].map(async (n) => `${n}@${await installedVersion(n)}`));
    const install = await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed.map((p) => path.join(work, p.filename)), ...peers], { cwd: consumer, timeoutMs: 240_000 });
    assert.equal(install.code, 0, install.stderr);

    // Type-check strict, NodeNext, skipLibCheck off.
    await copyFile(path.join(fixtures, 'index.ts'), path.join(consumer, 'index.ts'));
    await writeFile(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', skipLibCheck: false, noEmit: true, types: ['node'] },
        files: ['index.ts'],
      }),
    );
    const tsc = await run(process.execPath, [path.join(consumer, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: consumer, timeoutMs: 120_000 });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);

    // Runs against PostgreSQL; the migrations come from inside the package.
    await copyFile(path.join(fixtures, 'run.mjs'), path.join(consumer, 'run.mjs'));
    const env = { ...process.env, DATABASE_URL: database.url };
    for (const conditions of [[], ['--conditions=source']]) {
      const node = await run(process.execPath, [...conditions, 'run.mjs'], { cwd: consumer, env, timeoutMs: 30_000 });
      assert.equal(node.code, 0, `node ${conditions.join(' ')} run.mjs: ${node.stderr}`);
      assert.equal((JSON.parse(node.stdout) as { status: string }).status, 'working');
    }

    // Bundled into one file and run from a directory with nothing beside it.
    const bundled = path.join(work, 'bundled');
    await mkdir(bundled);
    const esbuild = await run(
      path.join(consumer, 'node_modules/.bin/esbuild'),
      ['run.mjs', '--bundle', '--platform=node', '--format=esm', '--external:pg-native',
        // pg is CommonJS and requires Node built-ins; an ESM bundle needs a require to give them.
        "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        `--outfile=${path.join(bundled, 'run.mjs')}`],
      { cwd: consumer, timeoutMs: 60_000 },
    );
    assert.equal(esbuild.code, 0, esbuild.stderr);
    assert.deepEqual(await readdir(bundled), ['run.mjs']);
    const bundle = await run(process.execPath, ['run.mjs'], { cwd: bundled, env, timeoutMs: 30_000 });
    assert.equal(bundle.code, 0, `the bundle: ${bundle.stderr}`);
    assert.equal((JSON.parse(bundle.stdout) as { status: string }).status, 'working');

    // The bin of @mcp-tasks/cli, as npm linked it.
    const bin = path.join(consumer, 'node_modules/.bin/mcp-tasks');
    const version = await run(bin, ['--version'], { cwd: consumer, timeoutMs: 20_000 });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), JSON.parse(await readFile(path.join(root, 'packages/cli/package.json'), 'utf8')).version);
    const status = await run(bin, ['status', '--schema', 'consumer'], { cwd: consumer, env, timeoutMs: 20_000 });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /Up to date\./);
  });

  it('the standalone server example, installed from the tarballs, lets the client example complete a task with an elicitation', async () => {
    const examples = path.join(work, 'examples');
    const tarballs = packed.filter((p) => p.name !== '@mcp-tasks/cli').map((p) => path.join(work, p.filename));
    const build = async (name: string, withTarballs: boolean) => {
      const dir = path.join(examples, name);
      await cp(path.join(root, 'examples', name), dir, { recursive: true, filter: (source) => !/[/\\](node_modules|dist)$/.test(source) });
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
      // The registry dependencies at the versions the workspace tests (from the npm cache); @mcp-tasks/* from the tarballs.
      const registry = Object.keys({ ...pkg['dependencies'], ...pkg['devDependencies'] }).filter((n) => !n.startsWith('@mcp-tasks/'));
      const pinned = await Promise.all(registry.map(async (n) => `${n}@${await installedVersion(n)}`));
      const install = await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', ...(withTarballs ? tarballs : []), ...pinned], { cwd: dir, timeoutMs: 150_000 });
      assert.equal(install.code, 0, `${name}: ${install.stderr}`);
      const tsc = await run(process.execPath, [path.join(dir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: dir, timeoutMs: 60_000 });
      assert.equal(tsc.code, 0, `${name}: ${tsc.stdout}${tsc.stderr}`);
      return dir;
    };
    const serverDir = await build('standalone-server', true);
    const clientDir = await build('client', false);
    assert.match(await readFile(path.join(serverDir, 'node_modules/@mcp-tasks/server/package.json'), 'utf8'), /"version"/, 'the server package came from its tarball');

    const server = spawn(process.execPath, ['dist/server.js'], { cwd: serverDir, env: { ...process.env, DATABASE_URL: database.url, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let serverErr = '';
    server.stderr!.on('data', (chunk: Buffer) => (serverErr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`the server did not start within 30 s: ${out}${serverErr}`)), 30_000);
        server.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/[^\s"]+)/.exec(out);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`the server exited with ${code}: ${out}${serverErr}`));
        });
      });
      const client = await run(process.execPath, ['dist/client.js', url, 'publish', '{"project":"site"}'], { cwd: clientDir, timeoutMs: 30_000 });
      assert.equal(client.code, 0, client.stderr);
      assert.match(client.stderr, /^task \S+$/m, 'the call became a task');
      assert.match(client.stderr, /the server asks: Publish site\?/);
      const result = JSON.parse(client.stdout) as { content: { text: string }[]; structuredContent: unknown };
      assert.equal(result.content[0]?.text, 'Published site.');
      assert.deepEqual(result.structuredContent, { project: 'site', published: true });
    } finally {
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    assert.equal(await exited, 0, `the server stops cleanly on SIGTERM: ${serverErr}`);
  });
});
