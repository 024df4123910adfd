// The gateway's configuration file is checked before anything connects: a bad file is one
// sentence naming the field and exit code 2; --help documents --config; docs/gateway.md lists
// every field of the schema.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { gatewayConfigSchema, upstreamSchema } from '../../packages/gateway/src/config-file/config-schema.js';
import { loadConfigFile } from '../../packages/gateway/src/config-file/load-config-file.js';
import { ROOT, waitForOutput } from '../support/demo-process.js';
import { within } from '../support/within.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-config-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const at = path.join(directory, name);
  writeFileSync(at, text);
  return at;
}

function run(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  // An unreachable database: a check that ran after connecting would hang or fail differently.
  const child = spawn(process.execPath, ['packages/gateway/dist/bin/main.js', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return within(new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr, stdout }))), 60_000, 'the gateway exits').finally(() => child.kill('SIGKILL'));
}

describe('the gateway configuration file', { timeout: 240_000 }, () => {
  it('a bad file is one sentence naming the field and exit code 2, before any database connection', async () => {
    const bad = file('bad.yaml', 'upstreams:\n  - name: files\n    url: not a url\n');
    const { code, stderr } = await run(['--config', bad]);
    assert.equal(code, 2);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /invalid at upstreams\[0\]\.url: /);
  });

  it('MCP_TASKS_GATEWAY_CONFIG names the file too; a JSON file with both url and command is refused', async () => {
    const both = file('both.json', JSON.stringify({ upstreams: [{ name: 'x', url: 'http://h/mcp', command: 'node' }] }));
    const { code, stderr } = await run([], { MCP_TASKS_GATEWAY_CONFIG: both });
    assert.equal(code, 2);
    assert.match(stderr, /upstreams\[0\]\.url: give exactly one of url \(HTTP\) or command \(stdio\)/);
  });

  it('an unset ${VAR}, an unknown field, a repeated name and scopes on an HTTP upstream each name their field', () => {
    assert.throws(() => loadConfigFile(file('var.yaml', 'upstreams:\n  - name: a\n    url: http://h/mcp\n    token: ${GATEWAY_TEST_UNSET}\n'), {}), /upstreams\[0\]\.token: the variable GATEWAY_TEST_UNSET is not set/);
    assert.throws(() => loadConfigFile(file('unknown.yaml', 'upstreams:\n  - name: a\n    url: http://h/mcp\n    tokn: t\n'), {}), /invalid at upstreams\[0\]/);
    assert.throws(() => loadConfigFile(file('twice.yaml', 'upstreams:\n  - name: a\n    url: http://h/mcp\n  - name: a\n    command: node\n'), {}), /upstreams\[1\]\.name: repeats the name of upstreams\[0\] \(a\)/);
    // The relay of an HTTP upstream checks no scopes: a setting it would ignore is refused, not left to look like a protection.
    assert.throws(() => loadConfigFile(file('http-scopes.yaml', 'upstreams:\n  - name: a\n    url: http://h/mcp\n    scopes: [admin]\n'), {}), /upstreams\[0\]\.scopes: is for a stdio upstream \(command\)/);
    const ok = loadConfigFile(file('ok.yaml', 'upstreams:\n  - name: a\n    url: http://h/mcp\n    token: ${T}\n'), { T: 'secret' });
    assert.equal(ok.config.upstreams?.[0]?.token, 'secret');
  });

  it('two upstream tools served under one name are refused at start, naming both', async () => {
    const fixture = JSON.stringify(path.join(ROOT, 'test/fixtures/stdio-plain-upstream.fixture.ts'));
    const stdio = (name: string) => `  - name: ${name}\n    prefix: ""\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", "tsx", ${fixture}]\n    cwd: ${JSON.stringify(ROOT)}\n`;
    const twice = file('collide.yaml', `upstreams:\n${stdio('one')}${stdio('two')}`);
    const { code, stderr } = await run(['--config', twice]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /Two tools would be served as count: from upstream one \(count\) and from upstream two \(count\)/);
  });

  it('two HTTP upstreams whose tools meet under one name are refused at start, naming both', async () => {
    const upstream = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/v1-tasks-upstream.fixture.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      upstream.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exited = new Promise((resolve) => upstream.on('exit', resolve));
      const url = await waitForOutput(() => output, /listening on (http:\/\/\S+)/, exited, 30_000);
      const http = (name: string) => `  - name: ${name}\n    prefix: ""\n    url: ${url}\n    revision: 2025-11-25\n`;
      const { code, stderr } = await run(['--config', file('collide-http.yaml', `upstreams:\n${http('one')}${http('two')}`)]);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /Two tools would be served as slow: from upstream one \(slow\) and from upstream two \(slow\)/);
    } finally {
      upstream.kill('SIGKILL');
    }
  });

  it('--help documents --config', async () => {
    const { code, stdout } = await run(['--help']);
    assert.equal(code, 0);
    assert.match(stdout, /--config FILE/);
    assert.match(stdout, /MCP_TASKS_GATEWAY_CONFIG/);
  });

  it('docs/gateway.md documents every field of the schema, and its reference table no field the schema lacks', () => {
    const docs = readFileSync(path.join(ROOT, 'docs/gateway.md'), 'utf8');
    const fields = [...Object.keys(gatewayConfigSchema.shape), ...Object.keys(upstreamSchema.shape).map((key) => `upstreams[].${key}`)];
    for (const field of fields) {
      assert.ok(docs.includes(`\`${field}\``), `docs/gateway.md documents \`${field}\``);
    }
    const documented = [...docs.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]!);
    assert.deepEqual(documented.filter((field) => !fields.includes(field)), [], 'the reference table lists only fields of the schema');
    assert.ok(documented.length >= fields.length, 'the reference table has a row per field');
  });
});
