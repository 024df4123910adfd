import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { freePort } from '../../packages/demo/src/cluster/embedded-postgres.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ROOT, waitForOutput } from '../support/demo-process.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { testClient } from '../support/pg-clients.js';

let database: TestDatabase;
before(async () => (database = await createTestDatabase()));
after(() => database.drop());

/** The embedded PostgreSQL's run directories: under TMPDIR as root, under MCP_TASKS_PG_DIR otherwise (both point at the test's folder). */
const RUN_DIR_PREFIX = process.getuid?.() === 0 ? 'mcp-tasks-cluster-pg-' : 'cluster-pg-';

interface Launcher {
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Exit code, or 128 + n when a signal killed it. */
  readonly exited: Promise<number>;
  /** What a terminal does to its foreground job: the signal goes to the whole process group. */
  signalGroup(signal: NodeJS.Signals): void;
  /** Pids of every process started for this launcher still running (the launcher, the cluster, nodes, PostgreSQL). */
  survivors(): Promise<number[]>;
}

/**
 * Runs `npm start`'s launcher in a process group of its own, as a shell runs a foreground job. A
 * marker in the environment, inherited by everything it starts, finds whatever is left; all of it
 * is SIGKILLed when the test ends.
 */
function startLauncher(t: TestContext, env: Record<string, string | undefined>): Launcher {
  const marker = `MCP_TASKS_TEST_MARK=${randomBytes(6).toString('hex')}`;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, MCP_TASKS_DRAIN_MS: '5000', [marker.split('=')[0]!]: marker.split('=')[1]!, ...env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key];
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/cluster/main.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? osSignal(signal) : 0))));
  const survivors = async () => {
    const pids: number[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
      if (environ.split('\0').includes(marker)) pids.push(Number(entry));
    }
    return pids;
  };
  t.after(async () => {
    for (const pid of await survivors()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  });
  return {
    child,
    output: () => output,
    exited,
    signalGroup: (signal) => process.kill(-child.pid!, signal),
    survivors,
  };
}

function osSignal(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}

/** Resolves with `promise`, or fails after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer!));
}

async function runDirs(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith(RUN_DIR_PREFIX));
}

/** Runs a command line as printed, from the checkout, as a newcomer would paste it into a shell. */
async function runPrinted(t: { after(fn: () => void): void }, command: string): Promise<{ code: unknown; output: string }> {
  const child = spawn('sh', ['-c', command], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await within(new Promise((resolve) => child.on('exit', resolve)), 60_000, command);
  return { code, output };
}

/** A pid that no process has now: one of a process that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('npm start\'s launcher', { timeout: 240_000 }, () => {
  it('brings up three nodes behind one URL, prints a command that runs a task through it, and stops cleanly on SIGTERM', async (t) => {
    const port = await freePort();
    const launcher = startLauncher(t, { DATABASE_URL: database.url, PORT: String(port) });
    const url = await waitForOutput(launcher.output, /MCP at (http:\/\/\S+)/, launcher.exited, 60_000);
    assert.equal(url, `http://127.0.0.1:${port}/mcp`);
    // Round robin: three requests meet three nodes.
    const seen = new Set<string>();
    for (let i = 0; i < 3; i += 1) seen.add((await fetch(url.replace('/mcp', '/healthz'))).headers.get('x-mcp-tasks-node') ?? '');
    assert.deepEqual([...seen].sort(), ['node-1', 'node-2', 'node-3']);
    // A task created through the front and followed through it (other nodes answer the polls).
    const created = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 3, delayMs: 50 } });
    const done = await waitFor(url, created.result!['taskId'] as string, (task) => task['status'] === 'completed');
    assert.match(JSON.stringify(done), /Exported 3 of 3 files\./);
    // The lines printed for a newcomer work as printed.
    const command = await waitForOutput(launcher.output, /try it \(in another terminal\): (.+)/, launcher.exited, 5_000);
    assert.equal(command, `npx mcp-tasks call ${url} export --arg project=demo`);
    const called = await runPrinted(t, command);
    assert.equal(called.code, 0, called.output);
    assert.match(called.output, /Exported 10 of 10 files\./);
    const watch = await waitForOutput(launcher.output, /or watch which node answers each step: (.+)/, launcher.exited, 5_000);
    const watched = await runPrinted(t, watch);
    assert.equal(watched.code, 0, watched.output);
    assert.match(watched.output, /completed .*answered by node-\d[\s\S]*Exported 5 of 5 files\./);
    // The console line signs in once; the session then works on whichever node the front picks.
    const consoleUrl = await waitForOutput(launcher.output, /operator console: (\S+)/, launcher.exited, 5_000);
    const signedIn = await fetch(consoleUrl, { redirect: 'manual' });
    assert.equal(signedIn.status, 303);
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const answeredBy = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const page = await fetch(url.replace('/mcp', '/console/api/tasks'), { headers: { cookie } });
      assert.equal(page.status, 200);
      answeredBy.add(page.headers.get('x-mcp-tasks-node') ?? '');
    }
    assert.equal(answeredBy.size, 3, 'three nodes took the one session');
    launcher.child.kill('SIGTERM');
    assert.equal(await within(launcher.exited, 30_000, 'exit after SIGTERM'), 0, launcher.output());
    assert.deepEqual(await launcher.survivors(), []);
  });

  it('with its embedded PostgreSQL, drains and exits 130 on Ctrl-C, leaving no process and no data folder, and removes the folders of dead earlier runs', async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'launcher-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // As root PostgreSQL runs as `postgres`, who must traverse TMPDIR like the system's /tmp.
    await chmod(dir, 0o755);
    // An earlier run whose launcher died (recorded pid dead), one of the older naming, and one still running (this test's pid).
    const stale = path.join(dir, `${RUN_DIR_PREFIX}stale1`);
    await mkdir(path.join(stale, 'data'), { recursive: true });
    await writeFile(path.join(stale, 'owner.pid'), `${await deadPid()}\n`);
    const legacy = path.join(dir, `${RUN_DIR_PREFIX}${await deadPid()}-abcdef`);
    await mkdir(legacy);
    const live = path.join(dir, `${RUN_DIR_PREFIX}alive1`);
    await mkdir(live);
    await writeFile(path.join(live, 'owner.pid'), `${process.pid}\n`);
    const port = await freePort();
    const launcher = startLauncher(t, { DATABASE_URL: undefined, PORT: String(port), TMPDIR: dir, MCP_TASKS_PG_DIR: dir });
    const url = await waitForOutput(launcher.output, /MCP at (http:\/\/\S+)/, launcher.exited, 90_000);
    assert.deepEqual((await runDirs(dir)).filter((name) => !name.endsWith('alive1')).length, 1, 'the stale folders are gone, this run has one');
    const created = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 2, delayMs: 20 } });
    await waitFor(url, created.result!['taskId'] as string, (task) => task['status'] === 'completed');
    // The printed operator command reaches this run's embedded database as printed.
    const operator = await waitForOutput(launcher.output, /operator commands \(tasks list, nodes, status\): (.+)/, launcher.exited, 5_000);
    assert.match(operator, /^DATABASE_URL=\S*postgres(ql)?:\/\/\S+ npx mcp-tasks nodes$/);
    const listed = await runPrinted(t, operator);
    assert.equal(listed.code, 0, listed.output);
    for (const name of ['node-1', 'node-2', 'node-3']) assert.match(listed.output, new RegExp(`^${name}/[0-9a-f]{16}\\s`, 'm'), listed.output);
    launcher.signalGroup('SIGINT');
    assert.equal(await within(launcher.exited, 60_000, 'exit after Ctrl-C'), 130, launcher.output());
    assert.match(launcher.output(), /Ctrl-C: draining the nodes[\s\S]*stopping PostgreSQL/);
    assert.doesNotMatch(launcher.output(), /mcp-tasks cluster: SIGTERM/, 'a Ctrl-C is called one');
    assert.deepEqual(await launcher.survivors(), []);
    assert.deepEqual(await runDirs(dir), [`${RUN_DIR_PREFIX}alive1`]);
  });

  it('drains and exits 0 on SIGHUP (the terminal closed), leaving no process', async (t) => {
    const port = await freePort();
    const launcher = startLauncher(t, { DATABASE_URL: database.url, PORT: String(port) });
    await waitForOutput(launcher.output, /MCP at (http:\/\/\S+)/, launcher.exited, 60_000);
    launcher.signalGroup('SIGHUP');
    assert.equal(await within(launcher.exited, 30_000, 'exit after SIGHUP'), 0, launcher.output());
    assert.match(launcher.output(), /draining the nodes/);
    assert.deepEqual(await launcher.survivors(), []);
  });

  it('when its output is closed (`npm start | tee log`, then Ctrl-C) it still drains: a running task completes and no process is left', async (t) => {
    const port = await freePort();
    const launcher = startLauncher(t, { DATABASE_URL: database.url, PORT: String(port) });
    const url = await waitForOutput(launcher.output, /MCP at (http:\/\/\S+)/, launcher.exited, 60_000);
    const created = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 10, delayMs: 150 } });
    const taskId = created.result!['taskId'] as string;
    // tee is gone: every later write of the launcher fails with EPIPE.
    launcher.child.stdout!.destroy();
    launcher.child.stderr!.destroy();
    launcher.signalGroup('SIGINT');
    assert.equal(await within(launcher.exited, 30_000, 'exit after Ctrl-C'), 130);
    assert.deepEqual(await launcher.survivors(), []);
    const client = testClient({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT status FROM mcp_tasks.tasks WHERE id = $1', [taskId]);
      assert.equal(rows[0]?.status, 'completed', 'the node drained the running task instead of dying with it');
    } finally {
      await client.end();
    }
  });

  it('refuses a port in use in one line, before it starts PostgreSQL or any node', async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'launcher-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    t.after(() => busy.close());
    const port = (busy.address() as net.AddressInfo).port;
    const launcher = startLauncher(t, { DATABASE_URL: undefined, PORT: String(port), TMPDIR: dir, MCP_TASKS_PG_DIR: dir });
    assert.equal(await within(launcher.exited, 15_000, 'exit on a busy port'), 1);
    assert.equal(launcher.output().trim(), `mcp-tasks cluster: port ${port} on 127.0.0.1 is already in use (an earlier npm start still running?): stop that, or set PORT to another port.`);
    assert.deepEqual(await runDirs(dir), []);
    assert.deepEqual(await launcher.survivors(), []);
  });
});
