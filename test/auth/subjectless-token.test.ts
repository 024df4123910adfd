// A verified token that names no subject (`sub`) is refused with 401 `invalid_token` saying so:
// with the default owner it would fall back to the shared host scope, and every such token of one
// client would share its tasks (another caller's tasks are an attacker's to read). Both paths of
// the handler (the SDK's and the direct one) and a host's `serveDirect` refuse it alike, before
// anything is created; a custom owner resolver decides for itself.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryTaskStore } from '@mcp-tasks/core';
import { defaultOwnerResolver, defineTool, McpTasks, type McpTasksHandler } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { within } from '../support/within.js';

const quick = defineTool({ name: 'quick', task: 'optional', input: z.object({}), execute: async () => ({ content: [{ type: 'text', text: 'done' }] }) });
const hour = () => Math.floor(Date.now() / 1000) + 3_600;
const RESOURCE = new URL('http://127.0.0.1/mcp');
const NO_SUB: AuthInfo = { token: 'machine', clientId: 'app', scopes: [], expiresAt: hour(), extra: { iss: 'custom' }, resource: RESOURCE };
const EMPTY_SUB: AuthInfo = { ...NO_SUB, token: 'machine-2', extra: { sub: '' } };
const WITH_SUB: AuthInfo = { ...NO_SUB, token: 'alice', extra: { sub: 'alice' } };

function post(method: string, params: Record<string, unknown>): { request: Request; body: unknown } {
  const text = requestBody(method, params, true);
  return { request: new Request('http://127.0.0.1/mcp', { method: 'POST', headers: requestHeaders(method, params), body: text }), body: JSON.parse(text) };
}

describe('a verified token without a subject', () => {
  let store: MemoryTaskStore;
  let tasks: McpTasks;
  let handlers: Record<string, McpTasksHandler>;
  before(() => {
    store = new MemoryTaskStore();
    tasks = new McpTasks({ store, rateLimit: false });
    handlers = {
      'the direct path': tasks.handler({ name: 'subjectless', version: '1', tools: [quick] }),
      'the SDK path': tasks.handler({ name: 'subjectless-sdk', version: '1', tools: [quick], directTasks: false }),
    };
  });
  after(async () => {
    for (const handler of Object.values(handlers)) await handler.close();
    await tasks.close();
  });

  for (const path of ['the direct path', 'the SDK path']) {
    for (const [what, auth] of [['no sub', NO_SUB], ['an empty sub', EMPTY_SUB]] as const) {
      it(`is refused with 401 invalid_token naming the missing subject on ${path} (${what}), and nothing is created`, async () => {
        const before = (await store.list({ subject: 'host', server: 'subjectless', clientId: 'app', resource: String(RESOURCE) }, {})).tasks.length;
        for (const [method, params] of [['tools/call', { name: 'quick', arguments: {} }], ['tasks/get', { taskId: 'a'.repeat(24) }]] as const) {
          const { request, body } = post(method, params);
          const response = await within(handlers[path]!.fetch(request, { authInfo: auth, parsedBody: body }), 10_000, `${method} answered`);
          assert.equal(response.status, 401, `${method}: ${await response.clone().text()}`);
          const challenge = response.headers.get('www-authenticate') ?? '';
          assert.match(challenge, /^Bearer error="invalid_token"/, challenge);
          assert.match(challenge, /names no subject \(sub\)/, challenge);
          assert.equal(((await response.json()) as { error?: string }).error, 'invalid_token');
        }
        const after = (await store.list({ subject: 'host', server: 'subjectless', clientId: 'app', resource: String(RESOURCE) }, {})).tasks.length;
        assert.equal(after, before, 'no task was created under the host scope');
      });
    }
  }

  it('is refused by serveDirect too, as a host that verified the token itself calls it', async () => {
    const { request, body } = post('tools/call', { name: 'quick', arguments: {} });
    const served = await handlers['the direct path']!.serveDirect({ method: 'POST', header: (name) => request.headers.get(name) ?? undefined, body, authInfo: NO_SUB, toRequest: () => request });
    assert.equal(served?.status, 401);
    assert.match(served?.headers['WWW-Authenticate'] ?? served?.headers['www-authenticate'] ?? '', /invalid_token/);
  });

  it('a token with a subject is served as before', async () => {
    const { request, body } = post('tools/call', { name: 'quick', arguments: {} });
    const response = await handlers['the direct path']!.fetch(request, { authInfo: WITH_SUB, parsedBody: body });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { result?: { resultType?: string } }).result?.resultType, 'task');
  });

  it('the default owner resolver never puts such a token in the host scope', () => {
    assert.throws(() => defaultOwnerResolver()({ authInfo: NO_SUB, serverName: 's' }), (error: Error & { code?: number }) => /names no subject \(sub\)/.test(error.message));
    assert.equal((defaultOwnerResolver()({ serverName: 's' }) as { subject: string }).subject, 'host', 'without a token: the host scope, as before');
  });
});
