// The direct path of McpTasks.handler (2026-07-28 tasks/get|update|cancel, and the tools/call of a
// task tool that becomes a task, served without a per-request McpServer) answers every request
// exactly as the SDK path does: the same handler built with `directTasks: false` is the reference,
// on one real PostgreSQL store, and each request of a matrix (good, bad headers, missing
// extension, unknown task or tool, another owner, missing scopes, bad answers or arguments, a tool
// with prepare, over quota, rate limit) is sent to both and compared byte for byte (status,
// headers, body; a created task's id and timestamps aside).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { ownerKey, type TaskOwner } from '@mcp-tasks/core';
import { defaultOwnerResolver, defineTool, McpTasks, RequestLimits, requestCost, withTaskListen, type McpTasksHandler } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import * as z from 'zod';
import { fastLane } from '../../packages/server/src/front/fast-lane.js';
import { Admission } from '../../packages/server/src/limits/admission.js';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { assertReplyConforms } from '../support/ext-tasks-schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';

const guarded = defineTool({
  name: 'guarded',
  task: 'optional',
  scopes: ['export'],
  input: z.object({}),
  execute: async (_args, ctx) => {
    const answer = await ctx.elicit('ok', { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    return { content: [{ type: 'text', text: `answer: ${answer.action}` }] };
  },
});

const counted = defineTool({
  name: 'counted',
  task: 'required',
  input: z.object({ n: z.number().int() }),
  execute: async ({ n }) => ({ content: [{ type: 'text', text: `n = ${n}` }] }),
});

const quick = defineTool({
  name: 'quick',
  task: 'optional',
  input: z.object({}),
  execute: async () => ({ content: [{ type: 'text', text: 'done' }] }),
});

const forbidden = defineTool({
  name: 'forbidden',
  task: 'forbidden',
  input: z.object({}),
  execute: async () => ({ content: [{ type: 'text', text: 'inline' }] }),
});

const preparing = defineTool({
  name: 'preparing',
  task: 'optional',
  input: z.object({}),
  prepare: async () => ({ ready: true }),
  execute: async () => ({ content: [{ type: 'text', text: 'prepared' }] }),
});

/** Stays live (waiting for its input), so it holds a slot of its owner's quota. */
const holding = defineTool({
  name: 'holding',
  task: 'required',
  input: z.object({}),
  execute: async (_args, ctx) => {
    await ctx.elicit('ok', { mode: 'form', message: 'Hold?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    return { content: [{ type: 'text', text: 'released' }] };
  },
});

/** A name the front door's body check refuses (the SDK would otherwise take it). */
const oddlyNamed = defineTool({
  name: 'odd/name',
  task: 'required',
  input: z.object({}),
  execute: async () => ({ content: [{ type: 'text', text: 'odd' }] }),
});

const TOOLS = [guarded, counted, quick, forbidden, preparing, holding, oddlyNamed];

const hour = () => Math.floor(Date.now() / 1000) + 3600;
const ALICE: AuthInfo = { token: 'alice', clientId: 'app', scopes: ['export'], expiresAt: hour(), extra: { sub: 'alice' }, resource: new URL('http://127.0.0.1/mcp') };
const ALICE_NO_SCOPE: AuthInfo = { ...ALICE, token: 'alice-2', scopes: [] };
const BOB: AuthInfo = { ...ALICE, token: 'bob', extra: { sub: 'bob' } };
const CAROL: AuthInfo = { ...ALICE, token: 'carol', extra: { sub: 'carol' } };

/** A task's id and timestamps differ between two created tasks; everything else must not. */
function withoutTaskIdentity(exchange: Exchange): Exchange {
  return {
    ...exchange,
    body: exchange.body.replace(/"taskId":"[^"]+"/g, '"taskId":"T"').replace(/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"/g, '"TIME"'),
  };
}

interface Exchange {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

interface Ask {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly auth?: AuthInfo | undefined;
  /** Declare the tasks extension in the envelope (default true). */
  readonly declare?: boolean;
  /** Header changes: a value replaces, `undefined` removes. */
  readonly headers?: Record<string, string | undefined>;
  /** Replaces the JSON body. */
  readonly body?: (body: Record<string, any>) => unknown;
  readonly id?: number;
}

function build(ask: Ask): { request: Request; body: unknown } {
  const body = JSON.parse(requestBody(ask.method, ask.params, ask.declare ?? true)) as Record<string, any>;
  body['id'] = ask.id ?? 7;
  const finalBody = ask.body ? ask.body(body) : body;
  const headers: Record<string, string> = { ...requestHeaders(ask.method, ask.params) };
  for (const [name, value] of Object.entries(ask.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const text = JSON.stringify(finalBody);
  return { request: new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: text }), body: finalBody };
}

async function send(handler: McpTasksHandler, ask: Ask): Promise<Exchange> {
  const { request, body } = build(ask);
  const response = await within(handler.fetch(request, { parsedBody: body, ...(ask.auth ? { authInfo: ask.auth } : {}) }), 10_000, `${ask.method} answered`);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const text = await response.text();
  // Both paths' answers are checked against the extension's official schema.
  if ((response.headers.get('content-type') ?? '').includes('application/json') && text !== '') assertReplyConforms(ask.method, JSON.parse(text));
  return { status: response.status, headers, body: text };
}

/** Whether the direct path itself takes `ask` (or leaves it to the SDK). */
async function takenDirectly(handler: McpTasksHandler, ask: Ask): Promise<boolean> {
  const { request, body } = build(ask);
  const served = await handler.serveDirect({ method: 'POST', header: (name) => request.headers.get(name) ?? undefined, body, authInfo: ask.auth, toRequest: () => request });
  return served !== undefined;
}

/** Two handlers on the shared store with a one-token rate limit: the direct path's (`a`) and the SDK path's (`b`). */
async function withRateLimitedPair(use: (a: McpTasksHandler, b: McpTasksHandler) => Promise<void>): Promise<void> {
  const limited = new McpTasks({ store: tasks.runtime.store, rateLimit: { requestsPerSecond: 0.01, burst: 1 } });
  const limitedSdk = new McpTasks({ store: tasks.runtime.store, rateLimit: { requestsPerSecond: 0.01, burst: 1 } });
  const a = limited.handler({ name: 'direct-test', version: '1.2.3', tools: [] });
  const b = limitedSdk.handler({ name: 'direct-test', version: '1.2.3', tools: [], directTasks: false });
  try {
    await use(a, b);
  } finally {
    await a.close();
    await b.close();
    await limited.runtime.close();
    await limitedSdk.runtime.close();
  }
}

/** A 429 without the figures that depend on when it was answered. */
function withoutRetryTimes(exchange: Exchange): Exchange {
  return { ...exchange, body: exchange.body.replace(/after [0-9]+ ms/, 'after N ms').replace(/"retryAfterMs":[0-9.]+/, '"retryAfterMs":0') };
}

let db: TestDatabase;
let tasks: McpTasks;
let direct: McpTasksHandler;
let sdk: McpTasksHandler;
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

async function createTask(auth: AuthInfo | undefined): Promise<string> {
  const created = await send(sdk, { method: 'tools/call', params: { name: 'guarded', arguments: {} }, auth });
  const taskId = JSON.parse(created.body)?.result?.taskId as string | undefined;
  assert.ok(taskId, created.body);
  // Until it waits for its answer, so every read below sees one state.
  for (let i = 0; i < 200; i += 1) {
    const got = JSON.parse((await send(sdk, { method: 'tasks/get', params: { taskId }, auth })).body);
    if (got.result?.status === 'input_required') return taskId;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the task never asked for its input');
}

/** The task's status once its run has taken what it was given (an accepted answer completes it). */
async function settled(taskId: string): Promise<string> {
  for (let i = 0; ; i += 1) {
    const status = JSON.parse((await send(sdk, { method: 'tasks/get', params: { taskId }, auth: ALICE })).body).result.status as string;
    if (status !== 'working' || i >= 200) return status;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

before(async () => {
  // So a task's execute_tool span finds the request span it was started under.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  db = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: db.url });
  tasks = new McpTasks({ store, pollIntervalMs: 50, rateLimit: false, telemetry: { tracerProvider } });
  direct = tasks.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS });
  sdk = tasks.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS, directTasks: false });
});

after(async () => {
  context.disable();
  await direct?.close();
  await sdk?.close();
  await tasks?.close();
  await db?.drop();
});

describe('the direct tasks path answers as the SDK path does', { timeout: 120_000 }, () => {
  it('tasks/get, with every kind of mistake, gets the same status, headers and body from both paths', async () => {
    const taskId = await createTask(ALICE);
    const unknown = 'AAAAAAAAAAAAAAAAAAAAAAAA';
    const cases: { name: string; ask: Ask; direct: boolean }[] = [
      { name: 'good', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE }, direct: true },
      { name: 'string id', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: (b) => ({ ...b, id: 'req-1' }) }, direct: true },
      { name: 'no extension', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, declare: false }, direct: true },
      { name: 'unknown task', ask: { method: 'tasks/get', params: { taskId: unknown }, auth: ALICE }, direct: true },
      { name: 'another owner', ask: { method: 'tasks/get', params: { taskId }, auth: BOB }, direct: true },
      { name: 'without the scope', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE_NO_SCOPE }, direct: true },
      { name: 'without a token', ask: { method: 'tasks/get', params: { taskId } }, direct: true },
      { name: 'Mcp-Name names another task', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-name': unknown } }, direct: false },
      { name: 'no Mcp-Name', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-name': undefined } }, direct: false },
      { name: 'Mcp-Name in Base64', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-name': `=?base64?${Buffer.from(taskId).toString('base64')}?=` } }, direct: false },
      { name: 'no Mcp-Method', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-method': undefined } }, direct: false },
      { name: 'Mcp-Method names another method', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-method': 'tasks/cancel' } }, direct: false },
      { name: 'no protocol version header', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-protocol-version': undefined } }, direct: false },
      { name: 'a 2025 protocol version header', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'mcp-protocol-version': '2025-11-25' } }, direct: false },
      { name: 'text/plain', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, headers: { 'content-type': 'text/plain' } }, direct: false },
      { name: 'no envelope', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: (b) => ({ ...b, params: { taskId } }) }, direct: false },
      { name: 'malformed task id', ask: { method: 'tasks/get', params: { taskId: 'not a task id' }, auth: ALICE }, direct: false },
      { name: 'taskId a number', ask: { method: 'tasks/get', params: { taskId: 5 }, auth: ALICE }, direct: false },
      { name: 'a notification', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: ({ id: _id, ...rest }) => rest }, direct: false },
      // After the good shape above was classified: each differs from it where the SDK's verdict can change.
      { name: 'a fractional id', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, id: 7.5 }, direct: false },
      { name: 'an id past the safe integers', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, id: 2 ** 60 }, direct: false },
      { name: 'an extra top-level key', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: (b) => ({ ...b, extra: true }) }, direct: false },
      { name: 'jsonrpc 1.0', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: (b) => ({ ...b, jsonrpc: '1.0' }) }, direct: false },
      {
        name: 'a clientInfo without its version',
        ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, body: (b) => ({ ...b, params: { ...b.params, _meta: { ...b.params._meta, 'io.modelcontextprotocol/clientInfo': { name: 'x' } } } }) },
        direct: false,
      },
      { name: 'good again, another id', ask: { method: 'tasks/get', params: { taskId }, auth: ALICE, id: 8 }, direct: true },
    ];
    for (const { name, ask, direct: expected } of cases) {
      assert.equal(await takenDirectly(direct, ask), expected, `${name}: the direct path ${expected ? 'takes' : 'leaves'} it`);
      const viaSdk = await send(sdk, ask);
      const viaDirect = await send(direct, ask);
      assert.deepEqual(viaDirect, viaSdk, `${name}: the same answer`);
    }
  });

  it('tasks/update answers, bad answers and foreign updates get the same answers from both paths', async () => {
    const answer = { action: 'accept', content: { ok: true } };
    const variants: { name: string; ask: (taskId: string) => Ask }[] = [
      { name: 'a good answer', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { ok: answer } }, auth: ALICE }) },
      { name: 'a wrapped answer', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { ok: { method: 'elicitation/create', result: answer } } }, auth: ALICE }) },
      { name: 'an unknown key', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { nope: answer } }, auth: ALICE }) },
      { name: 'an unknown key carrying a string beside a good answer', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { nope: 'yes', ok: answer } }, auth: ALICE }) },
      { name: 'an unknown key carrying a wrapper beside a wrapped answer', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { nope: { method: 'x', result: {} }, ok: { method: 'elicitation/create', result: answer } } }, auth: ALICE }) },
      { name: 'no inputResponses', ask: (taskId) => ({ method: 'tasks/update', params: { taskId }, auth: ALICE }) },
      { name: 'inputResponses a string', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: 'yes' }, auth: ALICE }) },
      { name: 'another owner', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { ok: answer } }, auth: BOB }) },
      { name: 'without the scope', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { ok: answer } }, auth: ALICE_NO_SCOPE }) },
      { name: 'no extension', ask: (taskId) => ({ method: 'tasks/update', params: { taskId, inputResponses: { ok: answer } }, auth: ALICE, declare: false }) },
    ];
    for (const { name, ask } of variants) {
      // A fresh task for each path: an update changes what the next one sees.
      const [forSdk, forDirect] = [await createTask(ALICE), await createTask(ALICE)];
      const viaSdk = await send(sdk, ask(forSdk));
      const viaDirect = await send(direct, ask(forDirect));
      assert.deepEqual(viaDirect, viaSdk, `${name}: the same answer`);
      assert.equal(await settled(forDirect), await settled(forSdk), `${name}: the same effect`);
    }
  });

  it('tasks/update ignores unknown keys whatever their value, and refuses only a malformed answer to an outstanding key, naming it (both paths)', async () => {
    const answer = { action: 'accept', content: { ok: true } };
    const ignored: Record<string, unknown> = { 'a string': 'yes', null: null, 'a number': 3, 'an array': [answer], 'a {method, result} wrapper': { method: 'elicitation/create', result: answer } };
    for (const [name, handler] of [['SDK', sdk], ['direct', direct]] as const) {
      for (const [what, value] of Object.entries(ignored)) {
        const taskId = await createTask(ALICE);
        const reply = await send(handler, { method: 'tasks/update', params: { taskId, inputResponses: { nope: value, ok: answer } }, auth: ALICE });
        assert.equal(JSON.parse(reply.body).result?.resultType, 'complete', `${name}, an unknown key carrying ${what}: acked (${reply.body})`);
        assert.equal(await settled(taskId), 'completed', `${name}, an unknown key carrying ${what}: the answer beside it counts`);
      }
      const taskId = await createTask(ALICE);
      const reply = await send(handler, { method: 'tasks/update', params: { taskId, inputResponses: { nope: 'yes', ok: { method: 'elicitation/create', result: answer } } }, auth: ALICE });
      const error = JSON.parse(reply.body).error;
      assert.equal(error?.code, -32602, `${name}: a wrapped answer to an outstanding key is refused (${reply.body})`);
      assert.match(error.message, /^inputResponses\.ok /, `${name}: the refusal names the outstanding key, not the unknown one`);
      assert.deepEqual(error.data, { invalidKeys: ['ok'] });
      assert.equal(await settled(taskId), 'input_required', `${name}: nothing was stored`);
    }
  });

  it("tasks/cancel of one's own, of another owner's and without the scope gets the same answers and effects from both paths", async () => {
    for (const [name, auth] of [['own', ALICE], ['another owner', BOB], ['without the scope', ALICE_NO_SCOPE]] as const) {
      const [forSdk, forDirect] = [await createTask(ALICE), await createTask(ALICE)];
      assert.equal(await takenDirectly(direct, { method: 'tasks/get', params: { taskId: forDirect }, auth }), true);
      const viaSdk = await send(sdk, { method: 'tasks/cancel', params: { taskId: forSdk }, auth });
      const viaDirect = await send(direct, { method: 'tasks/cancel', params: { taskId: forDirect }, auth });
      assert.deepEqual(viaDirect, viaSdk, `${name}: the same answer`);
      const status = async (taskId: string) => JSON.parse((await send(sdk, { method: 'tasks/get', params: { taskId }, auth: ALICE })).body).result.status;
      assert.equal(await status(forDirect), await status(forSdk), `${name}: the same effect`);
    }
  });

  it("a request span of the direct path has the name and attributes of the SDK path's", async () => {
    const taskId = await createTask(ALICE);
    const spanOf = async (handler: McpTasksHandler) => {
      exporter.reset();
      await send(handler, { method: 'tasks/get', params: { taskId }, auth: ALICE });
      const spans = exporter.getFinishedSpans().filter((span) => span.name === 'tasks/get');
      assert.equal(spans.length, 1);
      return { name: spans[0]!.name, kind: spans[0]!.kind, attributes: spans[0]!.attributes, status: spans[0]!.status };
    };
    assert.deepEqual(await spanOf(direct), await spanOf(sdk));
  });

  it('tools/call of a task tool, with every kind of mistake, gets the same status, headers and body from both paths', async () => {
    const call = (name: string, args: unknown, rest: Partial<Ask> = {}): Ask => ({ method: 'tools/call', params: { name, arguments: args }, ...rest });
    const cases: { name: string; ask: Ask; direct: boolean }[] = [
      { name: 'a required tool becomes a task', ask: call('counted', { n: 3 }), direct: true },
      { name: 'an optional tool becomes a task', ask: call('quick', {}), direct: true },
      { name: 'without arguments', ask: { method: 'tools/call', params: { name: 'quick' } }, direct: true },
      { name: 'a string id', ask: call('counted', { n: 3 }, { body: (b) => ({ ...b, id: 'call-1' }) }), direct: true },
      { name: 'a scoped tool with a token that grants its scope', ask: call('guarded', {}, { auth: ALICE }), direct: true },
      { name: 'a scoped tool with a token without its scope', ask: call('guarded', {}, { auth: ALICE_NO_SCOPE }), direct: false },
      { name: 'a scoped tool without a token', ask: call('guarded', {}), direct: false },
      { name: 'invalid arguments', ask: call('counted', { n: 'three' }), direct: false },
      { name: 'missing arguments', ask: call('counted', {}), direct: false },
      { name: 'arguments not an object', ask: call('counted', [3]), direct: false },
      { name: 'a required tool without the extension', ask: call('counted', { n: 3 }, { declare: false }), direct: false },
      { name: 'an optional tool without the extension', ask: call('quick', {}, { declare: false }), direct: false },
      { name: 'an unknown tool', ask: call('nope', {}), direct: false },
      { name: 'a forbidden tool', ask: call('forbidden', {}), direct: false },
      { name: 'a tool with prepare', ask: call('preparing', {}), direct: false },
      { name: 'Mcp-Name names another tool', ask: call('counted', { n: 3 }, { headers: { 'mcp-name': 'quick' } }), direct: false },
      { name: 'no Mcp-Name', ask: call('counted', { n: 3 }, { headers: { 'mcp-name': undefined } }), direct: false },
      { name: 'Mcp-Method names another method', ask: call('counted', { n: 3 }, { headers: { 'mcp-method': 'tasks/get' } }), direct: false },
      { name: 'a 2025 protocol version header', ask: call('counted', { n: 3 }, { headers: { 'mcp-protocol-version': '2025-11-25' } }), direct: false },
      { name: 'no envelope', ask: call('counted', { n: 3 }, { body: (b) => ({ ...b, params: { name: 'counted', arguments: { n: 3 } } }) }), direct: false },
      { name: 'name a number', ask: { method: 'tools/call', params: { name: 5 } }, direct: false },
      { name: 'a name the body check refuses', ask: call('odd/name', {}), direct: false },
    ];
    for (const { name, ask, direct: expected } of cases) {
      assert.equal(await takenDirectly(direct, ask), expected, `${name}: the direct path ${expected ? 'takes' : 'leaves'} it`);
      const viaSdk = withoutTaskIdentity(await send(sdk, ask));
      const viaDirect = withoutTaskIdentity(await send(direct, ask));
      assert.deepEqual(viaDirect, viaSdk, `${name}: the same answer`);
    }
  });

  it('a task created by the direct path is the row the SDK path creates, and runs to the same result', async () => {
    const ask: Ask = { method: 'tools/call', params: { name: 'counted', arguments: { n: 41 } }, auth: ALICE };
    assert.equal(await takenDirectly(direct, ask), true, 'the direct path takes it');
    const ids = [] as string[];
    for (const handler of [direct, sdk]) {
      const created = JSON.parse((await send(handler, ask)).body);
      assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
      ids.push(created.result.taskId as string);
    }
    const final = async (taskId: string) => {
      for (let i = 0; i < 400; i += 1) {
        const got = JSON.parse((await send(sdk, { method: 'tasks/get', params: { taskId }, auth: ALICE })).body).result;
        if (got.status !== 'working') return got;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`task ${taskId} never settled`);
    };
    const [fromDirect, fromSdk] = [await final(ids[0]!), await final(ids[1]!)];
    assert.equal(fromDirect.status, 'completed');
    const identityless = (task: Record<string, unknown>) => JSON.parse(withoutTaskIdentity({ status: 200, headers: {}, body: JSON.stringify(task) }).body);
    assert.deepEqual(identityless(fromDirect), identityless(fromSdk));
    const owner = await defaultOwnerResolver()({ authInfo: ALICE, serverName: 'direct-test' });
    const [rowDirect, rowSdk] = [await tasks.runtime.store.get({ taskId: ids[0]!, owner }), await tasks.runtime.store.get({ taskId: ids[1]!, owner })];
    assert.ok(rowDirect && rowSdk, 'both rows are the owner\'s');
    assert.deepEqual(
      { args: rowDirect.args, scopes: rowDirect.scopes, tool: rowDirect.tool, owner: rowDirect.owner, capabilities: rowDirect.clientCapabilities },
      { args: rowSdk.args, scopes: rowSdk.scopes, tool: rowSdk.tool, owner: rowSdk.owner, capabilities: rowSdk.clientCapabilities },
    );
  });

  it('over its quota an owner gets the same answers from both paths: a required tool refused, an optional one run inline', async () => {
    const quota = new McpTasks({ store: tasks.runtime.store, pollIntervalMs: 50, rateLimit: false, maxPerPrincipal: 1 });
    const a = quota.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS });
    const b = quota.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS, directTasks: false });
    try {
      const held = JSON.parse((await send(b, { method: 'tools/call', params: { name: 'holding', arguments: {} }, auth: CAROL })).body);
      assert.equal(held.result?.resultType, 'task', JSON.stringify(held));
      for (const ask of [
        { method: 'tools/call', params: { name: 'counted', arguments: { n: 1 } }, auth: CAROL },
        { method: 'tools/call', params: { name: 'quick', arguments: {} }, auth: CAROL },
      ] satisfies Ask[]) {
        assert.equal(await takenDirectly(a, ask), false, `${ask.params.name}: over quota, the direct path leaves it`);
        const [viaDirect, viaSdk] = [await send(a, ask), await send(b, ask)];
        assert.deepEqual(viaDirect, viaSdk, `${ask.params.name}: the same answer`);
      }
      assert.match((await send(a, { method: 'tools/call', params: { name: 'quick', arguments: {} }, auth: CAROL })).body, /"text":"done"/);
    } finally {
      await a.close();
      await b.close();
      await quota.runtime.close();
    }
  });

  it('a draining node answers tools/call on both paths alike, with one request span', async () => {
    const draining = new McpTasks({ store: tasks.runtime.store, pollIntervalMs: 50, rateLimit: false, telemetry: { tracerProvider } });
    const a = draining.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS });
    const b = draining.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS, directTasks: false });
    try {
      await within(draining.runtime.drain(1_000), 10_000, 'the drain');
      for (const ask of [
        { method: 'tools/call', params: { name: 'counted', arguments: { n: 1 } }, auth: ALICE },
        { method: 'tools/call', params: { name: 'quick', arguments: {} }, auth: ALICE },
      ] satisfies Ask[]) {
        assert.equal(await takenDirectly(a, ask), false, `${ask.params.name}: draining, the direct path leaves it`);
        exporter.reset();
        const viaDirect = await send(a, ask);
        assert.equal(exporter.getFinishedSpans().filter((span) => span.name.startsWith('tools/call')).length, 1, `${ask.params.name}: one request span`);
        assert.deepEqual(viaDirect, await send(b, ask), `${ask.params.name}: the same answer`);
      }
    } finally {
      await a.close();
      await b.close();
      await draining.runtime.close();
    }
  });

  it("a tools/call span of the direct path, and its task's execute_tool child, are the SDK path's", async () => {
    const spansOf = async (handler: McpTasksHandler) => {
      exporter.reset();
      const created = JSON.parse((await send(handler, { method: 'tools/call', params: { name: 'counted', arguments: { n: 2 } }, auth: ALICE })).body);
      const taskId = created.result.taskId as string;
      let run;
      for (let i = 0; i < 400 && !run; i += 1) {
        run = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool counted' && span.attributes['mcp.task.id'] === taskId);
        if (!run) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.ok(run, 'the run ended its execute_tool span');
      const calls = exporter.getFinishedSpans().filter((span) => span.name === 'tools/call counted');
      assert.equal(calls.length, 1);
      const call = calls[0]!;
      assert.equal(run.parentSpanContext?.spanId, call.spanContext().spanId, 'execute_tool is the child of tools/call');
      const stable = (attributes: Record<string, unknown>) => ({ ...attributes, 'mcp.task.id': typeof attributes['mcp.task.id'] });
      return { name: call.name, kind: call.kind, attributes: stable(call.attributes), status: call.status, run: { name: run.name, kind: run.kind } };
    };
    assert.equal(await takenDirectly(direct, { method: 'tools/call', params: { name: 'counted', arguments: { n: 2 } }, auth: ALICE }), true, 'the direct path takes it');
    assert.deepEqual(await spansOf(direct), await spansOf(sdk));
  });

  it('a handler told to answer every request as an event stream leaves tasks/* to the SDK, which streams them', async () => {
    const streaming = tasks.handler({ name: 'direct-test', version: '1.2.3', tools: TOOLS, handlerOptions: { responseMode: 'sse' } });
    try {
      const taskId = await createTask(ALICE);
      const ask: Ask = { method: 'tasks/get', params: { taskId }, auth: ALICE };
      assert.equal(await takenDirectly(streaming, ask), false);
      assert.match((await send(streaming, ask)).headers['content-type'] ?? '', /text\/event-stream/);
    } finally {
      await streaming.close();
    }
  });

  it('the direct path builds no WHATWG Request for a read when the owner needs none', async () => {
    const taskId = await createTask(ALICE);
    for (const auth of [ALICE, undefined]) {
      const { request, body } = build({ method: 'tasks/get', params: { taskId }, auth });
      let built = 0;
      const served = await direct.serveDirect({
        method: 'POST',
        header: (name) => request.headers.get(name) ?? undefined,
        body,
        authInfo: auth,
        toRequest: () => {
          built += 1;
          return request;
        },
      });
      assert.ok(served, 'the direct path takes the read');
      assert.equal(built, 0, `a ${auth ? 'token' : 'host-scope'} owner is resolved without the Request`);
    }
  });

  it('a rate-limited owner gets the same 429 from both paths', async () => {
    await withRateLimitedPair(async (a, b) => {
      const ask: Ask = { method: 'tasks/get', params: { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' }, auth: BOB };
      await send(a, ask);
      await send(b, ask);
      const [viaDirect, viaSdk] = [await send(a, ask), await send(b, ask)];
      assert.equal(viaDirect.status, 429);
      assert.deepEqual(withoutRetryTimes(viaDirect), withoutRetryTimes(viaSdk));
    });
  });

  it('a listen over its rate limit is refused on the direct path with the SDK path\'s 429, and one it admits is left to that path untaken', async () => {
    await withRateLimitedPair(async (a, b) => {
      const ask: Ask = { method: 'subscriptions/listen', params: { notifications: { taskIds: ['AAAAAAAAAAAAAAAAAAAAAAAA'] } }, auth: BOB };
      // Within its limit the listen is the SDK path's, and asking took no token: the one token still admits it.
      assert.equal(await takenDirectly(a, ask), false);
      const [firstDirect, firstSdk] = [await send(a, ask), await send(b, ask)];
      assert.equal(firstDirect.status, 200, firstDirect.body);
      assert.deepEqual(firstDirect, firstSdk);
      assert.equal(await takenDirectly(a, ask), true);
      const [viaDirect, viaSdk] = [await send(a, ask), await send(b, ask)];
      assert.equal(viaDirect.status, 429);
      assert.deepEqual(withoutRetryTimes(viaDirect), withoutRetryTimes(viaSdk));
    });
  });

  it("a listen past its owner's in-flight cap is refused on the direct path as the SDK path's edge refuses it, taking its token as that does", async () => {
    const serverName = 'direct-test';
    const resolveOwner = defaultOwnerResolver();
    const bob = ownerKey(resolveOwner({ authInfo: BOB, serverName }) as TaskOwner);
    const limitsOf = () =>
      new RequestLimits({
        rateLimit: { requestsPerSecond: 0.01, burst: 8 },
        inFlight: { maxPerOwner: 1, maxQueuedPerOwner: 0 },
        admission: false,
        toolRuns: false,
        pollIntervalMs: 1_000,
        maxTasksPerOwner: 100,
      });
    const [directLimits, edgeLimits] = [limitsOf(), limitsOf()];
    // The fast lane with no method row of its own to serve a listen: what it answers is admission's refusal step.
    const refusals = fastLane({ resolveOwner, serverName, admission: new Admission(directLimits, undefined), tasks: async () => undefined, toolCalls: undefined });
    const edge = withTaskListen(sdk, { runtime: tasks.runtime, ownerOf: async (authInfo, request) => resolveOwner({ authInfo, request, serverName }), limits: edgeLimits });
    // One request of Bob's under way on each (a free slot is given at once).
    const leaveDirect = directLimits.inFlight!.enter(bob) as () => void;
    const leaveEdge = edgeLimits.inFlight!.enter(bob) as () => void;
    const ask: Ask = { method: 'subscriptions/listen', params: { notifications: { taskIds: ['AAAAAAAAAAAAAAAAAAAAAAAA'] } }, auth: BOB };
    const { request, body } = build(ask);
    const served = await refusals({ method: 'POST', header: (name) => request.headers.get(name) ?? undefined, body, authInfo: BOB, toRequest: () => request });
    assert.ok(served, 'the direct path answers the refusal');
    const viaEdge = await within(edge.fetch(build(ask).request, { parsedBody: body, authInfo: BOB }), 10_000, 'the edge answered');
    const edgeHeaders: Record<string, string> = {};
    viaEdge.headers.forEach((value, name) => (edgeHeaders[name] = value));
    assert.deepEqual({ status: served.status, headers: { ...served.headers }, body: served.body }, { status: viaEdge.status, headers: edgeHeaders, body: await viaEdge.text() });
    assert.equal(served.status, 429);
    leaveDirect();
    leaveEdge();
    // Each refusal took a listen's price of the eight tokens (requestCost: 5, and 1 for its id),
    // as the edge's does: two are left on each.
    assert.equal(requestCost('subscriptions/listen', ask.params), 6);
    for (const { rateLimiter } of [directLimits, edgeLimits]) {
      assert.equal(rateLimiter!.take(bob), 0);
      assert.equal(rateLimiter!.take(bob), 0);
      assert.ok(rateLimiter!.take(bob) > 0);
    }
  });
});
