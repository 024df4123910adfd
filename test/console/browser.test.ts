// The operator console in a real headless browser (the system's Chromium, driven by
// playwright-core): sign-in with the console token, a task created through MCP showing within
// 2 s, a click on cancel cancelling it, the question a task waits on shown as its form, a failed
// task's code and message, a tool error marked as one, the counts' age, a cancel without the
// CSRF token refused, the `?token=` sign-in for scripts; a task's history, and the operator
// actions with their confirmation and audit row: a bulk cancel by filter of tasks another node
// runs, and a retry that a node claims. Screenshots of each view go to MCP_TASKS_CONSOLE_SCREENSHOTS
// (docs/console to refresh the documentation's), else to a temporary folder.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { authRpc } from '../support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, ROOT, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const CONSOLE_TOKEN = 'console-token-for-the-browser-test';
const TOKENS = { alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'] }, bob: { sub: 'bob', clientId: 'app-b', scopes: ['export'] } };
// Skipped, saying why, only when there is no browser to drive (.ci/run installs it as root).
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

describe('the operator console in a headless browser', { skip, timeout: 180_000 }, () => {
  let database: TestDatabase;
  let demo: DemoProcess;
  // A second node on the same database: the tasks it runs are cancelled and retried from the first's console.
  let other: DemoProcess;
  let browser: Browser;
  let dir: string;
  const shots = process.env['MCP_TASKS_CONSOLE_SCREENSHOTS'] ? path.resolve(ROOT, process.env['MCP_TASKS_CONSOLE_SCREENSHOTS']) : undefined;

  async function createExport(owner: string, project: string): Promise<string> {
    // Long enough to be live for the whole test; the cancel ends it.
    const reply = await authRpc(demo.url, owner, 'tools/call', { name: 'export', arguments: { project, files: 10_000, delayMs: 200 } });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
    return reply.result!['taskId'] as string;
  }
  async function taskOf(owner: string, taskId: string): Promise<Record<string, unknown>> {
    return (await authRpc(demo.url, owner, 'tasks/get', { taskId })).result!;
  }
  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(shots ?? dir, `${name}.png`), fullPage: true });
  }
  async function signedInPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${demo.base}/console`);
    await page.fill('#token', CONSOLE_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#who:has-text("signed in as console-token")', { timeout: 15_000 });
    return page;
  }

  before(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'console-browser-'));
    if (shots) mkdirSync(shots, { recursive: true });
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    demo = await spawnDemoNode('console-node', {
      DATABASE_URL: database.url,
      MCP_TASKS_TOKENS: tokens,
      MCP_TASKS_CONSOLE_TOKEN: CONSOLE_TOKEN,
      MCP_TASKS_CLUSTER_STATS_MS: '300',
      MCP_TASKS_POLL_INTERVAL_MS: '50',
    });
    other = await spawnDemoNode('console-other', {
      DATABASE_URL: database.url,
      MCP_TASKS_TOKENS: tokens,
      MCP_TASKS_POLL_INTERVAL_MS: '50',
    });
    browser = await within(chromium.launch({ executablePath: CHROMIUM, headless: true }), 60_000, 'Chromium starts');
  });
  after(async () => {
    await browser?.close().catch(() => undefined);
    demo?.child.kill('SIGKILL');
    other?.child.kill('SIGKILL');
    await Promise.all([demo?.exited, other?.exited]);
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the console token, shows a task created through MCP within 2 s, and cancels it with a click', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const policyViolations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
    });
    const first = await page.goto(`${demo.base}/console`);
    assert.equal(first?.status(), 401, 'the console refuses a browser without the session cookie');
    await page.waitForSelector('#token');
    await screenshot(page, 'login');
    await page.fill('#token', 'not-the-token');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error:has-text("not accepted")', { timeout: 10_000 });
    await page.fill('#token', CONSOLE_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#who:has-text("signed in as console-token")', { timeout: 15_000 });
    assert.equal(new URL(page.url()).pathname, '/console');
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'mcp_tasks_console');
    assert.ok(session, 'a session cookie was set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');

    const bobTask = await createExport('bob', 'bob-project');
    const created = Date.now();
    const taskId = await createExport('alice', 'alice-secret-project');
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await row.waitFor({ state: 'visible', timeout: 2_000 });
    const shownMs = Date.now() - created;
    assert.ok(shownMs <= 2_000, `shown ${shownMs} ms after it was created`);
    assert.equal(await row.locator('td').nth(3).textContent(), 'alice', 'the owner is shown by subject');
    await eventually(async () => (await row.locator('td.message').textContent())!.includes('/'), 10_000, 'the export reports progress');
    await page.waitForSelector('#counts-body th:has-text("cluster")', { timeout: 10_000 });
    await eventually(async () => (await page.locator('#nodes-body').textContent())!.includes('console-node'), 10_000, 'the node is listed');
    await screenshot(page, 'overview');

    await row.click();
    await page.waitForSelector(`#detail-id:has-text("${taskId}")`, { timeout: 5_000 });
    const detail = (await page.locator('#detail').textContent())!;
    assert.match(detail, /alice/);
    assert.match(detail, /keys files, confirm, delayMs, project; \d+ bytes/);
    assert.doesNotMatch(detail, /alice-secret-project/, 'arguments are shown as keys and size only');
    await screenshot(page, 'detail');

    await row.locator('button.cancel').click();
    // Nothing happens before the operator confirms.
    await page.waitForSelector('#confirm[open]', { timeout: 5_000 });
    assert.match((await page.locator('#confirm').textContent())!, new RegExp(`Cancel task ${taskId}\\?.*done by console:console-token`, 's'));
    assert.equal((await taskOf('alice', taskId))['status'], 'working');
    await screenshot(page, 'confirm-cancel');
    await page.click('#confirm-yes');
    await page.waitForSelector(`tr[data-task-id="${taskId}"] td.status:has-text("cancelled")`, { timeout: 10_000 });
    // The history: created, then the operator's cancel (who) and the cancel it made.
    await page.waitForSelector('#detail-history td.event:has-text("operator console:console-token: cancel")', { timeout: 10_000 });
    assert.match((await page.locator('#detail-history').textContent())!, /created.*operator console:console-token: cancel.*cancelled \(Cancelled by an operator\)/s);
    const seen = await taskOf('alice', taskId);
    assert.equal(seen['status'], 'cancelled');
    assert.equal(seen['statusMessage'], 'Cancelled by an operator');
    await eventually(async () => demo.output().includes(JSON.stringify(`operator "console-token" cancelled task "${taskId}"`).slice(1, -1)), 5_000, 'the cancel is logged');
    assert.equal((await taskOf('bob', bobTask))['status'], 'working', 'only the clicked task was cancelled');

    // A task waiting for its owner: the detail lists the input request, its content as keys and size.
    const asking = await authRpc(demo.url, 'bob', 'tools/call', { name: 'confirm_delete', arguments: { filename: 'bob-private.pdf' } });
    const askingId = asking.result!['taskId'] as string;
    await eventually(async () => (await taskOf('bob', askingId))['status'] === 'input_required', 10_000, 'confirm_delete asks');
    await page.locator(`tr[data-task-id="${askingId}"]`).click();
    await page.waitForSelector('#detail-inputs td:has-text("elicitation/create")', { timeout: 10_000 });
    // The question is shown as the form it is: the tool's message and each field with its type.
    const question = page.locator('#detail-inputs td.question');
    assert.equal(await question.locator('.question-message').textContent(), 'Delete bob-private.pdf?');
    assert.equal(await question.locator('li').textContent(), 'confirm: boolean, required');
    assert.match((await page.locator('#detail-inputs').textContent())!, /not answered/);
    // The history shows the question asked as its form too.
    await page.waitForSelector('#detail-history td.event:has-text("asked confirm") .question-message:has-text("Delete bob-private.pdf?")', { timeout: 10_000 });
    await screenshot(page, 'detail-input');
    assert.deepEqual(policyViolations, []);
    await context.close();
  });

  it('shows a failed task\'s code and message at #task=ID and keeps it open; a tool error reads as one; the counts say how old they are', async () => {
    const failed = (await authRpc(demo.url, 'alice', 'tools/call', { name: 'protocol_error_job', arguments: {} })).result!['taskId'] as string;
    const toolError = (await authRpc(demo.url, 'alice', 'tools/call', { name: 'failing_job', arguments: {} })).result!['taskId'] as string;
    await eventually(async () => (await taskOf('alice', failed))['status'] === 'failed', 15_000, 'protocol_error_job fails');
    await eventually(async () => (await taskOf('alice', toolError))['status'] === 'completed', 15_000, 'failing_job completes');
    const signedIn = await signedInPage();
    // A fresh load of the link, as an operator pasting it would.
    const page = await signedIn.context().newPage();
    await page.goto(`${demo.base}/console#task=${encodeURIComponent(failed)}`);
    await page.waitForSelector(`#detail-id:has-text("${failed}")`, { timeout: 10_000 });
    await page.waitForSelector('#detail-fields dd:has-text("code -32603")', { timeout: 10_000 });
    const fields = (await page.locator('#detail-fields').textContent())!;
    assert.match(fields, /code -32603: The job hit an internal protocol error; data keys reason; 22 bytes/);
    assert.doesNotMatch(fields, /simulated|object Object/);
    await page.waitForSelector('#detail-history td.event:has-text("failed: code -32603: The job hit an internal protocol error")', { timeout: 10_000 });
    // Still open after further refreshes, and no error above the list.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(await page.locator('#detail').isVisible(), true, 'the detail of a failed task stays open');
    assert.equal(await page.locator('#error').isVisible(), false);
    await screenshot(page, 'detail-failed');

    const toolRow = page.locator(`tr[data-task-id="${toolError}"] td.status`);
    await toolRow.waitFor({ state: 'visible', timeout: 5_000 });
    assert.equal(await toolRow.textContent(), 'completed: tool error');
    assert.match((await toolRow.getAttribute('class'))!, /tool-error/);
    assert.doesNotMatch((await toolRow.getAttribute('class'))!, /\bcompleted\b/, 'not styled as a success');
    await eventually(async () => /^counted \d+(ms|s) ago by \S+ \(the task list below is live\)$/.test((await page.locator('#counts-caption').textContent())!), 10_000, 'the counts table says how old it is');
    await page.context().close();
  });

  it('cancels in bulk by filter the tasks another node runs, once confirmed, and retries one as a new task that a node claims', async () => {
    const bobs: string[] = [];
    for (const project of ['bulk-1', 'bulk-2']) {
      const reply = await authRpc(other.url, 'bob', 'tools/call', { name: 'export', arguments: { project, files: 10_000, delayMs: 200 } });
      bobs.push(reply.result!['taskId'] as string);
    }
    const alices = await createExport('alice', 'not-in-the-filter');
    const page = await signedInPage();
    await page.fill('#filters input[name=tool]', 'export');
    await page.fill('#filters input[name=owner]', 'bob');
    await page.selectOption('#filters select[name=status]', 'working');
    await page.click('#filters button[type=submit]');
    await page.click('#bulk-cancel');
    await page.waitForSelector('#confirm[open]', { timeout: 5_000 });
    const question = (await page.locator('#confirm').textContent())!;
    assert.match(question, /Cancel these \d+ live tasks matching status=working tool=export owner=bob\?/);
    for (const id of bobs) assert.match(question, new RegExp(id));
    assert.doesNotMatch(question, new RegExp(alices));
    await screenshot(page, 'confirm-bulk');
    await page.click('#confirm-yes');
    await page.waitForSelector('#bulk-result:has-text("Cancelled")', { timeout: 10_000 });
    for (const id of bobs) assert.equal((await (await authRpc(other.url, 'bob', 'tasks/get', { taskId: id })).result!)['status'], 'cancelled');
    assert.equal((await taskOf('alice', alices))['status'], 'working', 'a task outside the filter is left');

    await page.goto(`${demo.base}/console#task=${encodeURIComponent(bobs[0]!)}`);
    await page.waitForSelector('#detail-history td.event:has-text("(bulk, status=working tool=export owner=bob)")', { timeout: 10_000 });
    assert.match((await page.locator('#detail-history').textContent())!, /console-other\//, 'the history names the node that ran it');
    await page.click('#detail-retry');
    await page.waitForSelector('#confirm[open]', { timeout: 5_000 });
    await page.click('#confirm-yes');
    await page.waitForSelector('#detail-history td.event:has-text("a retry of")', { timeout: 10_000 });
    const newId = (await page.locator('#detail-id').textContent())!;
    assert.notEqual(newId, bobs[0]);
    await page.waitForSelector('#detail-history td.event:has-text("claimed by")', { timeout: 15_000 });
    const renewed = (await authRpc(other.url, 'bob', 'tasks/get', { taskId: newId })).result!;
    assert.equal(renewed['status'], 'working', 'the owner has the new task');
    await screenshot(page, 'detail-history');
    await page.evaluate(async ({ id, token }) => {
      await fetch(`/console/api/tasks/${encodeURIComponent(id)}/cancel`, { method: 'POST', headers: { 'x-csrf-token': token } });
    }, { id: newId, token: (await page.evaluate(async () => ((await (await fetch('/console/api/session')).json()) as { csrfToken: string }).csrfToken)) as string });
    await page.context().close();
  });

  it('refuses a cancel POST without the CSRF token, even with the session cookie', async () => {
    const page = await signedInPage();
    const taskId = await createExport('bob', 'csrf-project');
    const statuses = await page.evaluate(async (id) => {
      const url = `/console/api/tasks/${encodeURIComponent(id)}/cancel`;
      const bare = await fetch(url, { method: 'POST' });
      const wrong = await fetch(url, { method: 'POST', headers: { 'x-csrf-token': 'forged' } });
      return [bare.status, wrong.status];
    }, taskId);
    assert.deepEqual(statuses, [403, 403]);
    assert.equal((await taskOf('bob', taskId))['status'], 'working');
    await page.context().close();
  });

  it('answers the API 401 without the cookie, and takes ?token= once: the cookie and a redirect to /console', async () => {
    const anonymous = await fetch(`${demo.base}/console/api/tasks`);
    assert.equal(anonymous.status, 401);
    assert.match(((await anonymous.json()) as { error: string }).error, /not signed in/);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${demo.base}/console?token=${encodeURIComponent(CONSOLE_TOKEN)}`);
    await page.waitForSelector('#who:has-text("signed in as console-token")', { timeout: 15_000 });
    assert.equal(page.url(), `${demo.base}/console`, 'the token is gone from the address');
    const tasks = await page.evaluate(async () => (await fetch('/console/api/tasks')).status);
    assert.equal(tasks, 200);
    await context.close();
  });
});
