// Every TypeScript block of README.md and of the packages' READMEs is extracted and type-checked
// as the module a reader would paste (strict, NodeNext, the workspace's packages as published);
// the runnable ones then run: the store snippet against a database of its own, the README's
// server until it listens, then Ctrl-C, after which it must drain and exit 0 by itself.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ROOT } from '../support/demo-process.js';

const SOURCES = ['README.md', 'packages/core/README.md', 'packages/postgres/README.md', 'packages/server/README.md', 'packages/cli/README.md', 'packages/demo/README.md'];
// Inside the checkout, so that the snippets' imports resolve to the workspace's packages.
const DIR = path.join(ROOT, 'test', '.snippets');

interface Snippet {
  readonly source: string;
  readonly line: number;
  readonly file: string;
}

function extract(): Snippet[] {
  const snippets: Snippet[] = [];
  for (const source of SOURCES) {
    let text: string;
    try {
      text = readFileSync(path.join(ROOT, source), 'utf8');
    } catch {
      continue;
    }
    const fence = /^```(ts|typescript)\n([\s\S]*?)^```$/gm;
    for (let match = fence.exec(text); match; match = fence.exec(text)) {
      const line = text.slice(0, match.index).split('\n').length;
      const file = path.join(DIR, `${source.replace(/[/.]/g, '_')}_${line}.mts`);
      // `export {}`: a module even when the snippet has no import (top-level await needs one).
      writeFileSync(file, `${match[2]}\nexport {};\n`);
      snippets.push({ source, line, file });
    }
  }
  return snippets;
}

function run(file: string, env: NodeJS.ProcessEnv): { child: ReturnType<typeof spawn>; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

describe('the READMEs\' code', { timeout: 180_000 }, () => {
  let snippets: Snippet[];
  let database: TestDatabase;
  before(async () => {
    mkdirSync(DIR, { recursive: true });
    snippets = extract();
    database = await createTestDatabase();
  });
  after(async () => {
    rmSync(DIR, { recursive: true, force: true });
    await database?.drop();
  });

  it('type-checks every TypeScript block of the READMEs', () => {
    assert.ok(snippets.length >= 3, `found ${snippets.length} blocks`);
    const program = ts.createProgram(
      snippets.map((snippet) => snippet.file),
      { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, skipLibCheck: true, types: ['node'], customConditions: ['@mcp-tasks/source'] },
    );
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const snippet = snippets.find((s) => s.file === diagnostic.file?.fileName);
      const at = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
      return `${snippet ? `${snippet.source}: the block at line ${snippet.line}, its line ${at}` : diagnostic.file?.fileName}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    assert.deepEqual(problems, []);
  });

  it('names in each package README\'s install line every package its code imports', () => {
    const missing: string[] = [];
    for (const source of SOURCES.filter((name) => name.startsWith('packages/'))) {
      const code = snippets.filter((snippet) => snippet.source === source).map((snippet) => readFileSync(snippet.file, 'utf8'));
      if (code.length === 0) continue;
      const install = /npm install ([^\n]+)/.exec(readFileSync(path.join(ROOT, source), 'utf8'))?.[1] ?? '';
      for (const text of code) {
        for (const [, name] of text.matchAll(/from '((?:@[^/']+\/)?[^/.'][^/']*)/g)) {
          if (!name!.startsWith('node:') && !install.split(/\s+/).includes(name!)) missing.push(`${source}: ${name}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('runs the store snippet of packages/postgres/README.md against a database', async () => {
    const snippet = snippets.find((s) => s.source === 'packages/postgres/README.md')!;
    const started = run(snippet.file, { DATABASE_URL: database.url });
    assert.equal(await within(started.exited, 60_000, 'the snippet exits'), 0, started.output());
  });

  it('runs the README\'s server: it serves MCP on loopback, and Ctrl-C drains it to exit 0', async () => {
    const snippet = snippets.find((s) => s.source === 'README.md')!;
    const port = await freePort();
    const server = run(snippet.file, { DATABASE_URL: database.url, PORT: String(port) });
    try {
      const url = `http://127.0.0.1:${port}/mcp`;
      let listed: Response | undefined;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline && listed === undefined; ) {
        listed = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }) }).catch(() => undefined);
        if (listed === undefined) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.ok(listed, `the server listens on ${url}: ${server.output()}`);
      assert.equal(listed.status, 200, await listed.text());
      server.child.kill('SIGINT');
      assert.equal(await within(server.exited, 30_000, 'the server drains and exits after Ctrl-C'), 0, server.output());
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
