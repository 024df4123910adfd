import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, chown, cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../../packages/demo/src/cluster/embedded-postgres.js';
import { packagedBinaries } from '../../packages/demo/src/cluster/postgres-binaries.js';
import { ROOT } from '../support/demo-process.js';
import { testClient } from '../support/pg-clients.js';

const isRoot = process.getuid?.() === 0;
const NOT_ROOT = 'needs root: PostgreSQL runs as the postgres user only when started by root';

async function scratchDir(t: { after(fn: () => Promise<void>): void }, mode = 0o700): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'embedded-pg-test-'));
  await chmod(dir, mode);
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of the packaged PostgreSQL installation under `dir` (a checkout in root's 0700 home, in miniature). */
async function installationIn(dir: string): Promise<string> {
  const installDir = path.join(dir, 'postgresql');
  await cp(packagedBinaries().root, installDir, { recursive: true, verbatimSymlinks: true });
  return installDir;
}

async function currentUser(url: string): Promise<string> {
  const client = testClient({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT current_user')).rows[0].current_user;
  } finally {
    await client.end();
  }
}

describe('the embedded PostgreSQL', { timeout: 120_000 }, () => {
  it('as root, runs from an installation in a 0700 directory the postgres user cannot enter, and removes its run folder on stop', { skip: isRoot ? false : NOT_ROOT }, async (t) => {
    const closed = await scratchDir(t);
    const installDir = await installationIn(closed);
    assert.notEqual(spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', path.join(installDir, 'bin', 'initdb')]).status, 0, 'postgres cannot reach the installation');
    const server = await startEmbeddedPostgres({ parentDir: closed, name: 'pg-closed', installDir });
    t.after(() => server.stop());
    assert.equal(await currentUser(server.url), 'postgres');
    assert.ok(server.runDir.startsWith(tmpdir()), server.runDir);
    await server.stop();
    assert.deepEqual((await readdir(tmpdir())).filter((name) => name === path.basename(server.runDir)), []);
  });

  it('as an ordinary user (nobody, via runuser), starts, answers and leaves nothing in its folder', { skip: isRoot ? false : 'needs root to become nobody; as an ordinary user every other test here already runs so' }, async (t) => {
    const entry = path.join(ROOT, 'packages/demo/dist/cluster/embedded-postgres.js');
    if (spawnSync('runuser', ['-u', 'nobody', '--', 'test', '-r', entry]).status !== 0) {
      t.skip('nobody cannot read this checkout (one in root\'s 0700 home): the as-root tests cover that case');
      return;
    }
    const parent = await scratchDir(t, 0o755);
    await chown(parent, Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout), Number(spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).stdout));
    const script = `
      const { startEmbeddedPostgres } = await import(${JSON.stringify(entry)});
      const pg = (await import(${JSON.stringify(path.join(ROOT, 'node_modules/pg/lib/index.js'))})).default;
      const server = await startEmbeddedPostgres({ parentDir: ${JSON.stringify(parent)}, name: 'pg-nobody' });
      // A process of its own (run as nobody) cannot load the suite's TypeScript helper: the same error listener by hand.
      const client = new pg['Client']({ connectionString: server.url });
      client.on('error', () => {});
      await client.connect();
      const { rows } = await client.query('SELECT current_user');
      await client.end();
      await server.stop();
      console.log(JSON.stringify({ user: rows[0].current_user, runDir: server.runDir }));`;
    const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: parent } });
    t.after(() => child.kill('SIGKILL'));
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, output);
    const result = JSON.parse(output.trim().split('\n').pop()!);
    assert.equal(result.user, 'postgres');
    assert.equal(path.dirname(result.runDir), parent);
    assert.deepEqual(await readdir(parent), []);
  });

  it('binaries nobody may execute stop the start with one sentence saying what to do, not an unhandled error event', async (t) => {
    const dir = await scratchDir(t, 0o755);
    const installDir = await installationIn(dir);
    for (const file of await readdir(path.join(installDir, 'bin'))) await chmod(path.join(installDir, 'bin', file), 0o644);
    const before = await readdir(tmpdir());
    await assert.rejects(startEmbeddedPostgres({ parentDir: dir, name: 'pg-noexec', installDir }), (error: unknown) => {
      assert.ok(error instanceof EmbeddedPostgresError, String(error));
      assert.match(error.message, /set DATABASE_URL to a PostgreSQL server\.$/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
    assert.deepEqual((await readdir(dir)).filter((name) => name !== 'postgresql'), [], 'no run folder is left');
    assert.deepEqual((await readdir(tmpdir())).filter((name) => name.startsWith('mcp-tasks-pg-noexec') && !before.includes(name)), []);
  });

  it('as root, a TMPDIR the postgres user cannot traverse stops the start with one sentence saying what to do', { skip: isRoot ? false : NOT_ROOT }, async (t) => {
    const closed = await scratchDir(t);
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = closed;
    t.after(async () => {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
    });
    await assert.rejects(startEmbeddedPostgres({ parentDir: closed, name: 'pg-tmpdir' }), (error: unknown) => {
      assert.ok(error instanceof EmbeddedPostgresError, String(error));
      assert.match(error.message, /cannot reach the temporary directory .*: set TMPDIR to a directory it can traverse/);
      return true;
    });
    assert.deepEqual(await readdir(closed), []);
  });
});
