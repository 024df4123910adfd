// docs/tutorial.md, run as a newcomer would type it: every `sh` line in order, every `ts file=…`
// block written to its file, in a temporary folder. Three substitutions, each because the test
// runs on this checkout rather than on GitHub: the clone's URL is this repository (a shallow
// local clone); `npm install` links the clone's node_modules to this checkout's (installed and
// built already; a real install takes longer than this test may); the port is a free one. The
// server line runs in the background until the page's last command.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, waitForOutput } from '../support/demo-process.js';

interface Step {
  readonly kind: 'sh' | 'file';
  readonly text: string;
  readonly file?: string;
}

function stepsOf(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const match of markdown.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const [, lang, info, body] = match;
    const file = /file=(\S+)/.exec(info!)?.[1];
    if (lang === 'sh') for (const line of body!.split('\n').filter((l) => l.trim() !== '')) steps.push({ kind: 'sh', text: line.trim() });
    else if (file) steps.push({ kind: 'file', text: body!, file });
  }
  return steps;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

describe('docs/tutorial.md', { timeout: 90_000 }, () => {
  it('runs from a clone to the first task of a server of one\'s own, every command as written', async () => {
    const page = readFileSync(path.join(ROOT, 'docs/tutorial.md'), 'utf8');
    const steps = stepsOf(page);
    assert.ok(steps.some((step) => step.kind === 'file'), 'the page writes a server');
    const port = String(await freePort());
    const dir = mkdtempSync(path.join(tmpdir(), 'tutorial-'));
    let cwd = dir;
    let server: ChildProcess | undefined;
    let serverOutput = '';
    const outputs: string[] = [];
    try {
      for (const step of steps) {
        if (step.kind === 'file') {
          mkdirSync(path.dirname(path.join(cwd, step.file!)), { recursive: true });
          writeFileSync(path.join(cwd, step.file!), step.text);
          continue;
        }
        const line = step.text.replaceAll('3100', port);
        if (line.startsWith('git clone ')) {
          const target = line.split(' ').at(-1)!.replace(/\.git$/, '').split('/').at(-1)!;
          const clone = spawnSync('git', ['clone', '--quiet', '--depth', '1', `file://${ROOT}`, target], { cwd, encoding: 'utf8', timeout: 30_000 });
          assert.equal(clone.status, 0, clone.stderr);
          continue;
        }
        if (line.startsWith('cd ')) {
          cwd = path.join(cwd, line.slice(3));
          continue;
        }
        if (line === 'npm install') {
          symlinkSync(path.join(ROOT, 'node_modules'), path.join(cwd, 'node_modules'), 'dir');
          continue;
        }
        if (line.includes('npx tsx ')) {
          // The server: in the foreground for a reader, in the background here.
          // Its own process group, so the shell, npx and tsx all stop with it.
          server = spawn('sh', ['-c', line], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
          server.stdout!.on('data', (chunk: Buffer) => (serverOutput += chunk));
          server.stderr!.on('data', (chunk: Buffer) => (serverOutput += chunk));
          const exited = new Promise((resolve) => server!.once('exit', resolve));
          await waitForOutput(() => serverOutput, new RegExp(`my-server listening on http://127\\.0\\.0\\.1:${port}/mcp`), exited, 30_000);
          continue;
        }
        const run = spawnSync('sh', ['-c', line], { cwd, encoding: 'utf8', timeout: 30_000 });
        outputs.push(`$ ${line}\n${run.stdout}${run.stderr}`);
        if (line.includes('--arg to=many')) {
          assert.notEqual(run.status, 0, 'a wrong argument fails');
          assert.match(run.stderr, /\bto\b.*number/i, 'the error names the argument and its type');
        } else {
          assert.equal(run.status, 0, `${line}\n${run.stdout}${run.stderr}`);
        }
      }
      const all = outputs.join('\n');
      assert.match(all, /count/, 'tools lists the tool');
      assert.match(all, /Counted to 5\./, 'the first task completes');
    } finally {
      const group = (signal: NodeJS.Signals) => {
        try {
          if (server?.pid) process.kill(-server.pid, signal);
        } catch {
          // already gone
        }
      };
      group('SIGTERM');
      if (server && server.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 1_000));
      group('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
