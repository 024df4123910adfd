// The benchmark harness keeps working: `npm run bench -- --quick` runs every scenario with small
// counts against the test database server and writes a document with every section. Nothing
// about time is asserted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('npm run bench -- --quick writes a document with every scenario section', { timeout: 300_000 }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-bench-'));
  const out = path.join(dir, 'benchmarks.md');
  try {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('npm', ['run', 'bench', '--', '--quick', '--out', out], { cwd: root, env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-8_000)));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(code, 0, stderr);
    const document = await readFile(out, 'utf8');
    assert.match(document, /^# Benchmarks/m);
    assert.match(document, /\| Machine \| .+ cores/);
    assert.match(document, /`shared_buffers` = /);
    assert.match(document, /npm run bench -- --quick/);
    for (let section = 1; section <= 10; section += 1) {
      const heading = new RegExp(`^## ${section}\\. .+$`, 'm');
      assert.match(document, heading, `section ${section}`);
      const body = document.slice(document.search(heading)).split(/^## /m)[1]!;
      assert.doesNotMatch(body, /scenario failed|Not run/, `section ${section} ran`);
      assert.match(body, /\| Metric \| Median \|/, `section ${section} has figures`);
    }
    assert.match(document, /^## 12\. Fair share/m, 'the fair-share scenario ran');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
