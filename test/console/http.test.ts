// The operator console's HTTP contract, request by request, against demo node processes on a
// real PostgreSQL: what is refused without a session, how a session is made (the console
// token, an operator-scoped bearer token, `?token=` once), the cookie's flags, the CSRF check
// of a cancel, the API's filters and paging, what the detail hides, and the login limit.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postConsoleSignIn } from '../support/console-sign-in.js';
import { authRpc } from '../support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { nodeName } from '../support/node-name.js';

const CONSOLE_TOKEN = 'console-token-for-the-http-test';
const TOKENS = {
  alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'] },
  bob: { sub: 'bob', clientId: 'app-b', scopes: ['export'] },
  'ops-token': { sub: 'ops-person', clientId: 'ops-app', scopes: ['operator'] },
};

describe('the operator console over HTTP', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let demo: DemoProcess;
  let secure: DemoProcess;
  let dir: string;

  async function createExport(owner: string, project: string): Promise<string> {
    const reply = await authRpc(demo.url, owner, 'tools/call', { name: 'export', arguments: { project, files: 10_000, delayMs: 200 } });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
    return reply.result!['taskId'] as string;
  }
  async function signIn(base: string, token: string): Promise<Response> {
    return postConsoleSignIn(base, token);
  }
  function sessionCookies(response: Response): string[] {
    return response.headers.getSetCookie().filter((cookie) => cookie.startsWith('mcp_tasks_console='));
  }
  function cookieOf(response: Response): string {
    const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('mcp_tasks_console='));
    assert.ok(header, `a session cookie in ${JSON.stringify(response.headers.getSetCookie())}`);
    return header.split(';')[0]!;
  }
  async function session(): Promise<{ cookie: string; csrf: string }> {
    const cookie = cookieOf(await signIn(demo.base, CONSOLE_TOKEN));
    const body = (await (await fetch(`${demo.base}/console/api/session`, { headers: { cookie } })).json()) as { csrfToken: string };
    return { cookie, csrf: body.csrfToken };
  }
  async function api(pathAndQuery: string, cookie: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${demo.base}${pathAndQuery}`, { headers: { cookie } });
    return { status: response.status, body: await response.json() };
  }

  before(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'console-http-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    const env = { DATABASE_URL: database.url, MCP_TASKS_TOKENS: tokens, MCP_TASKS_CONSOLE_TOKEN: CONSOLE_TOKEN, MCP_TASKS_POLL_INTERVAL_MS: '50' };
    [demo, secure] = await Promise.all([
      spawnDemoNode('console-a', env),
      spawnDemoNode('console-b', { ...env, MCP_TASKS_PUBLIC_URL: 'https://console.example' }),
    ]);
  });
  after(async () => {
    for (const node of [demo, secure]) node?.child.kill('SIGKILL');
    await Promise.all([demo?.exited, secure?.exited]);
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses every console page and API without the session cookie, and a forged or foreign one', async () => {
    for (const url of ['/console', '/console/static/console.js', '/console/api/tasks', '/console/api/summary', '/console/api/session', '/console/api/tasks/x']) {
      const response = await fetch(`${demo.base}${url}`);
      assert.equal(response.status, 401, url);
      assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/, url);
    }
    const page = await fetch(`${demo.base}/console`);
    assert.match(await page.text(), /<form method="post" action="\/console\/login">/, 'a browser is shown the sign-in form');
    const cancel = await fetch(`${demo.base}/console/api/tasks/x/cancel`, { method: 'POST' });
    assert.equal(cancel.status, 401);

    const { cookie } = await session();
    const [payload, signature] = cookie.slice('mcp_tasks_console='.length).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, subject: 'mallory' })).toString('base64url');
    assert.equal((await api('/console/api/tasks', `mcp_tasks_console=${forged}.${signature}`)).status, 401, 'a changed session is refused');
    assert.equal((await api('/console/api/tasks', 'mcp_tasks_console=garbage')).status, 401);
    assert.equal((await api('/console/api/tasks', cookie)).status, 200);
    // Another node of the same cluster (the same console token) accepts the session.
    assert.equal((await fetch(`${secure.base}/console/api/tasks`, { headers: { cookie } })).status, 200);
  });

  it('signs in with the console token or an operator-scoped bearer token, in an HttpOnly, SameSite=Strict cookie', async () => {
    const wrong = await signIn(demo.base, 'console-token-for-the-http-tesT');
    assert.equal(wrong.status, 401);
    assert.deepEqual(sessionCookies(wrong), [], 'no session cookie (only the re-served form\'s)');
    const notOperator = await signIn(demo.base, 'alice');
    assert.equal(notOperator.status, 401, 'a bearer token without the operator scope is refused');

    const ok = await signIn(demo.base, CONSOLE_TOKEN);
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('location'), '/console');
    const header = ok.headers.getSetCookie()[0]!;
    assert.match(header, /; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=(\d+)$/);
    assert.ok(Number(/Max-Age=(\d+)/.exec(header)![1]) <= 8 * 3600, 'the session has a bounded lifetime');
    assert.doesNotMatch(header, /Secure/, 'not Secure on a plain-http node');
    assert.doesNotMatch(header, new RegExp(CONSOLE_TOKEN), 'the cookie does not carry the token');

    const operator = await signIn(demo.base, 'ops-token');
    assert.equal(operator.status, 303);
    const me = await api('/console/api/session', cookieOf(operator));
    assert.equal(me.body.subject, 'ops-person');

    const https = await signIn(secure.base, CONSOLE_TOKEN);
    assert.match(https.headers.getSetCookie()[0]!, /; Secure$/, 'Secure when the public URL is https');
  });

  it('takes ?token= once: the cookie and a 303 to the bare /console; a wrong one gets the form', async () => {
    const response = await fetch(`${demo.base}/console?token=${encodeURIComponent(CONSOLE_TOKEN)}`, { redirect: 'manual' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/console');
    assert.equal(response.headers.get('referrer-policy'), 'same-origin');
    const cookie = cookieOf(response);
    const page = await fetch(`${demo.base}/console`, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script src="\/console\/static\/console.js" defer><\/script>/);
    const wrong = await fetch(`${demo.base}/console?token=nope`, { redirect: 'manual' });
    assert.equal(wrong.status, 401);
    assert.deepEqual(sessionCookies(wrong), [], 'no session cookie (only the re-served form\'s)');
  });

  it('cancels only with the session\'s CSRF token from the console\'s own origin, as the operator command does', async () => {
    const { cookie, csrf } = await session();
    const taskId = await createExport('alice', 'csrf-target');
    const cancel = (headers: Record<string, string>) => fetch(`${demo.base}/console/api/tasks/${taskId}/cancel`, { method: 'POST', headers: { cookie, ...headers } });
    assert.equal((await cancel({})).status, 403);
    assert.equal((await cancel({ 'x-csrf-token': 'forged' })).status, 403);
    const other = await session();
    assert.equal((await cancel({ 'x-csrf-token': other.csrf })).status, 403, 'another session\'s token is refused');
    assert.equal((await cancel({ 'x-csrf-token': csrf, origin: 'https://evil.example' })).status, 403, 'a cross-site Origin is refused');
    assert.equal((await fetch(`${demo.base}/console/api/tasks/${taskId}/cancel`, { headers: { cookie } })).status, 405);
    assert.equal((await authRpc(demo.url, 'alice', 'tasks/get', { taskId })).result!['status'], 'working');

    const done = await cancel({ 'x-csrf-token': csrf, origin: demo.base });
    assert.equal(done.status, 200);
    assert.deepEqual(await done.json(), { cancelled: true, status: 'cancelled', statusMessage: 'Cancelled by an operator' });
    const seen = (await authRpc(demo.url, 'alice', 'tasks/get', { taskId })).result!;
    assert.equal(seen['status'], 'cancelled');
    assert.equal(seen['statusMessage'], 'Cancelled by an operator');
    await eventually(async () => demo.output().includes(JSON.stringify(`operator "console-token" cancelled task "${taskId}"`).slice(1, -1)), 5_000, 'the cancel is logged');
    const again = await cancel({ 'x-csrf-token': csrf });
    assert.deepEqual(await again.json(), { cancelled: false, status: 'cancelled', statusMessage: 'Cancelled by an operator' }, 'a terminal task is left as it is');
    assert.equal((await cancel({ 'x-csrf-token': csrf }).then((r) => r.status)), 200);
    const missing = await fetch(`${demo.base}/console/api/tasks/no-such-task/cancel`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(missing.status, 404);
  });

  it('lists tasks with the filters of tasks list and pages through them; the detail shows subjects and sizes, never data or tokens', async () => {
    const { cookie } = await session();
    const bobIds = [await createExport('bob', 'bob-secret-1'), await createExport('bob', 'bob-secret-2'), await createExport('bob', 'bob-secret-3')];
    const first = await api('/console/api/tasks?owner=bob&limit=2', cookie);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.tasks.map((t: { taskId: string }) => t.taskId), [bobIds[2], bobIds[1]]);
    assert.equal(first.body.next, bobIds[1]);
    const second = await api(`/console/api/tasks?owner=bob&limit=2&after=${first.body.next}`, cookie);
    assert.deepEqual(second.body.tasks.map((t: { taskId: string }) => t.taskId), [bobIds[0]]);
    assert.equal(second.body.next, null);
    assert.deepEqual((await api('/console/api/tasks?owner=bob&status=cancelled', cookie)).body.tasks, []);
    assert.equal((await api('/console/api/tasks?owner=bob&tool=export&node=console-a&olderThan=0s', cookie)).body.tasks.length, 3);
    assert.equal((await api('/console/api/tasks?owner=bob&olderThan=1h', cookie)).body.tasks.length, 0);
    for (const [query, message] of [
      ['status=stuck', /status must be one of/],
      ['limit=0', /limit must be an integer from 1 to 200/],
      ['limit=201', /limit must be an integer from 1 to 200/],
      ['olderThan=a+while', /olderThan takes a duration/],
      ['sort=owner', /unknown parameter "sort"/],
    ] as const) {
      const bad = await api(`/console/api/tasks?${query}`, cookie);
      assert.equal(bad.status, 400, query);
      assert.match(bad.body.error, message);
    }

    const detail = await api(`/console/api/tasks/${bobIds[0]}`, cookie);
    assert.equal(detail.status, 200);
    assert.deepEqual(detail.body.owner, { subject: 'bob', server: 'mcp-tasks-demo' });
    assert.deepEqual(detail.body.args.keys.sort(), ['confirm', 'delayMs', 'files', 'project']);
    const text = JSON.stringify(detail.body);
    assert.doesNotMatch(text, /bob-secret/, 'arguments are keys and sizes');
    assert.doesNotMatch(text, /app-b|Bearer/, 'nothing of the owner but the subject and server');
    assert.equal((await api('/console/api/tasks/no-such-task', cookie)).status, 404);
    const malformed = await api('/console/api/tasks/%E0%A4%A', cookie);
    assert.deepEqual([malformed.status, malformed.body], [400, { error: 'malformed task id' }]);

    const summary = await api('/console/api/summary', cookie);
    assert.deepEqual(summary.body.nodes.map((n: { nodeId: string }) => nodeName(n.nodeId)).sort(), ['console-a', 'console-b']);
    assert.equal(summary.body.nodes[0].expired, false);
  });

  it('answers 400, not 500, to a NUL in any filter, the cursor or a task id, and to an age beyond PostgreSQL\'s intervals', async () => {
    const { cookie, csrf } = await session();
    for (const query of ['owner=a%00b', 'tool=%00', 'node=n%00', 'after=x%00y', 'status=%00', 'olderThan=999999999d', 'olderThan=99999999999ms']) {
      const bad = await api(`/console/api/tasks?${query}`, cookie);
      assert.equal(bad.status, 400, `${query}: ${JSON.stringify(bad.body)}`);
      assert.match(bad.body.error, /control character|olderThan|status must be/, query);
    }
    assert.deepEqual(await api('/console/api/tasks/abc%00def', cookie), { status: 400, body: { error: 'malformed task id' } });
    const cancel = await fetch(`${demo.base}/console/api/tasks/abc%00def/cancel`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(cancel.status, 400);
    assert.doesNotMatch(demo.output(), /invalid byte sequence|interval field value out of range|\n\s+at /, 'nothing reached PostgreSQL or logged a stack');
  });

  it('shows a failed task\'s error code and message (its data as keys and size, no stack) and marks a tool error', async () => {
    const { cookie } = await session();
    const failed = (await authRpc(demo.url, 'alice', 'tools/call', { name: 'protocol_error_job', arguments: {} })).result!['taskId'] as string;
    const toolError = (await authRpc(demo.url, 'alice', 'tools/call', { name: 'failing_job', arguments: {} })).result!['taskId'] as string;
    await eventually(async () => (await api(`/console/api/tasks/${failed}`, cookie)).body.status === 'failed', 15_000, 'protocol_error_job fails');
    await eventually(async () => (await api(`/console/api/tasks/${toolError}`, cookie)).body.status === 'completed', 15_000, 'failing_job completes');
    const detail = (await api(`/console/api/tasks/${failed}`, cookie)).body;
    assert.deepEqual(detail.error, { code: -32603, message: 'The job hit an internal protocol error', data: { keys: ['reason'], bytes: 22 } });
    assert.equal(detail.toolError, false);
    const listed = (await api('/console/api/tasks?owner=alice&tool=failing_job', cookie)).body.tasks;
    assert.equal(listed[0].toolError, true, 'a completed task with isError is marked');
    assert.equal((await api(`/console/api/tasks/${toolError}`, cookie)).body.toolError, true);
  });

  it('needs the sign-in form\'s CSRF token for a sign-in POST; ?token= still signs in without it', async () => {
    const bare = await fetch(`${demo.base}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: CONSOLE_TOKEN }) });
    assert.equal(bare.status, 403);
    assert.match(await bare.text(), /sign-in form expired or came from elsewhere/);
    assert.deepEqual(sessionCookies(bare), [], 'no session');
    const noField = await postConsoleSignIn(demo.base, CONSOLE_TOKEN, { form: false });
    assert.equal(noField.status, 403, 'the cookie alone is not enough');
    // A form served by one node signs in on another (the key is the console token's).
    const served = await fetch(`${secure.base}/console/login`);
    const formToken = /name="csrf" value="([^"]+)"/.exec(await served.text())![1]!;
    const formCookie = served.headers.getSetCookie().find((value) => value.startsWith('mcp_tasks_console_login='))!.split(';')[0]!;
    assert.match(served.headers.getSetCookie().join(), /mcp_tasks_console_login=[^;]+; Path=\/console\/login; HttpOnly; SameSite=Strict/);
    const across = await fetch(`${demo.base}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie }, body: new URLSearchParams({ token: CONSOLE_TOKEN, csrf: formToken }) });
    assert.equal(across.status, 303);
    const other = (await fetch(`${demo.base}/console/login`)).headers.getSetCookie()[0]!.split(';')[0]!;
    const mismatched = await fetch(`${demo.base}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: other }, body: new URLSearchParams({ token: CONSOLE_TOKEN, csrf: formToken }) });
    assert.equal(mismatched.status, 403, "another form's token");
    const link = await fetch(`${demo.base}/console?token=${CONSOLE_TOKEN}`, { redirect: 'manual' });
    assert.deepEqual([link.status, link.headers.get('location')], [303, '/console']);
  });

  it('is off (404) on a node without MCP_TASKS_CONSOLE_TOKEN', async () => {
    const plain = await spawnDemoNode('no-console', { DATABASE_URL: '' });
    try {
      assert.equal((await fetch(`${plain.base}/console`)).status, 404);
      assert.equal((await fetch(`${plain.base}/console/api/tasks`)).status, 404);
    } finally {
      plain.child.kill('SIGKILL');
      await plain.exited;
    }
  });

  // Last: it leaves this address blocked on console-b for a minute.
  it('refuses sign-ins from an address after 10 failures in a minute, the right token too', async () => {
    for (let attempt = 0; attempt < 10; attempt += 1) assert.equal((await signIn(secure.base, `wrong-${attempt}`)).status, 401);
    const blocked = await signIn(secure.base, CONSOLE_TOKEN);
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.deepEqual(sessionCookies(blocked), [], 'no session cookie');
    assert.equal((await fetch(`${secure.base}/console?token=${CONSOLE_TOKEN}`, { redirect: 'manual' })).status, 429);
    assert.equal((await signIn(demo.base, CONSOLE_TOKEN)).status, 303, 'another node keeps its own count');
  });
});
