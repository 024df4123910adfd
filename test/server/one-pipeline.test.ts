// The request pipeline of @mcp-tasks/server exists once: a request is classified once (the lane it
// ends in reads the classification kept with its body), and each step that two lanes share (the
// scope check, the request context, the JSON-RPC error body, the method rows) is written in one
// module, which the other modules call. The source guard fails when a second copy appears.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { classifyRequest } from '../../packages/server/src/exchange/classify-request.js';
import { TASK_METHODS_2026, taskMethodOf } from '../../packages/server/src/front/method-table.js';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'server', 'src');

function sources(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [{ file: path.relative(SRC, full).split(path.sep).join('/'), text: readFileSync(full, 'utf8') }] : [];
  });
}

/** The files of packages/server/src whose code matches `pattern` (comments aside). */
function filesMatching(pattern: RegExp): string[] {
  return sources(SRC)
    .filter(({ text }) => pattern.test(text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')))
    .map(({ file }) => file)
    .sort();
}

describe('one request pipeline', () => {
  it('classifies a body once: the lane it ends in reads the same classification', () => {
    const body = { jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: { notifications: { taskIds: ['a', 'b'] } } };
    const first = classifyRequest(body);
    assert.ok(first);
    assert.equal(first.kind, 'task');
    assert.equal(classifyRequest(body), first, 'the second read is the first verdict');
    // Another body of the same text is another request.
    assert.notEqual(classifyRequest(structuredClone(body)), first);
    const ignored = { jsonrpc: '2.0', method: 'notifications/initialized' };
    assert.equal(classifyRequest(ignored), undefined);
    assert.equal(classifyRequest(ignored), undefined);
    assert.deepEqual(classifyRequest({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'export' } }), {
      id: 1,
      method: 'tools/call',
      kind: 'toolCall',
      toolName: 'export',
      params: { name: 'export' },
    });
  });

  it('has one row per 2026-07-28 tasks/* method, which both lanes serve', () => {
    assert.deepEqual(Object.keys(TASK_METHODS_2026), ['tasks/get', 'tasks/update', 'tasks/cancel']);
    for (const [method, row] of Object.entries(TASK_METHODS_2026)) {
      assert.equal(taskMethodOf(method), row);
      assert.equal(row.span, method);
      assert.equal(row.limited, 'task');
      assert.equal(row.scoped, 'task');
    }
    assert.equal(taskMethodOf('tasks/list'), undefined, 'a 2025-11-25 method is not a row of 2026-07-28');
    assert.equal(taskMethodOf('constructor'), undefined);
  });

  it('writes each shared step in one module', () => {
    // The scope check: access/ only.
    assert.deepEqual(filesMatching(/\bmissingScopes\(/), ['access/task-scopes.ts']);
    // The SDK's context, built beside the SDK.
    assert.deepEqual(filesMatching(/as unknown as ServerContext/), ['front/request-context.ts']);
    // A JSON-RPC error response body written by hand (a 2025-11-25 tasks/result sends a failed task's stored error verbatim).
    assert.deepEqual(filesMatching(/jsonrpc: '2\.0',\s*id(?::[^,]+)?,\s*error:/), ['errors/json-rpc-error-body.ts', 'legacy/legacy-task-result.ts']);
    // The classification of a request the pipeline acts on.
    assert.deepEqual(filesMatching(/function classify(?:Request)?\(/), ['exchange/classify-request.ts']);
    // The owner of a request the fast lane serves.
    assert.deepEqual(filesMatching(/[Rr]esolveOwner\(\{/), ['access/request-owner.ts']);
    // The tasks/* handlers are registered from the table, not one by one.
    assert.deepEqual(filesMatching(/setRequestHandler\('tasks\//), []);
  });

  it('has no two folders of the package importing each other, directly or around a loop', () => {
    const edges = new Map<string, Set<string>>();
    for (const { file, text } of sources(SRC)) {
      const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';
      if (folder === '.') continue;
      for (const match of text.matchAll(/from '\.\.\/([a-z-]+)\//g)) {
        if (!edges.has(folder)) edges.set(folder, new Set());
        edges.get(folder)!.add(match[1]!);
      }
    }
    const loops: string[] = [];
    const visit = (folder: string, trail: string[]) => {
      for (const next of edges.get(folder) ?? []) {
        if (trail.includes(next)) loops.push([...trail.slice(trail.indexOf(next)), next].join(' -> '));
        else visit(next, [...trail, next]);
      }
    };
    for (const folder of edges.keys()) visit(folder, [folder]);
    assert.deepEqual([...new Set(loops)], []);
  });
});
