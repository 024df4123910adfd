import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  checkInputRequest,
  InputNotSupportedError,
  InvalidInputRequestError,
  MemoryTaskStore,
  TaskRuntime,
  type ClientCapabilities,
  type InputRequest,
  type TaskContext,
  type TaskOwner,
} from '@mcp-tasks/core';
import { ended, testRuntime, until } from './support/runtime-harness.js';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'test', clientId: '', resource: '' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const TASKS_ONLY: ClientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

function runtime(): { rt: TaskRuntime; store: MemoryTaskStore } {
  const store = new MemoryTaskStore();
  return { rt: testRuntime({ store }), store };
}

/** Runs `ask` in a task and reports how the ask ended: the error's class, code and data, or "asked". */
async function outcomeOfAsk(ask: (ctx: TaskContext) => Promise<unknown>, clientCapabilities?: ClientCapabilities) {
  const { rt, store } = runtime();
  const record = await rt.start({
    owner: owner(),
    tool: 'ask',
    args: {},
    ...(clientCapabilities ? { clientCapabilities } : {}),
    execute: async (_args, ctx) => {
      try {
        await ask(ctx);
        return text('asked');
      } catch (error) {
        const e = error as { name: string; code: number; data?: unknown; message: string };
        return { ...text(e.message), structuredContent: { name: e.name, code: e.code, data: (e.data ?? null) as never } };
      }
    },
  });
  const task = await until(rt, record, (t) => ended(t) || t.status === 'input_required');
  const stored = await store.get(record);
  return { task, inputs: stored?.inputs ?? {}, structured: task.status === 'completed' ? (task.result['structuredContent'] as Record<string, unknown>) : undefined };
}

describe('input requests are checked against the protocol before anything is stored', () => {
  test('a form elicitation without requestedSchema is refused with InvalidInputRequestError, and the task never waits', async () => {
    // The README's old example: `ctx.elicit('confirm', { message })`, which the official client rejects.
    const { task, inputs, structured } = await outcomeOfAsk((ctx) => ctx.elicit('confirm', { message: 'Publish p?' } as never));
    assert.equal(task.status, 'completed');
    assert.deepEqual(structured, { name: InvalidInputRequestError.name, code: -32602, data: { inputKey: 'confirm' } });
    assert.match(task.status === 'completed' ? JSON.stringify(task.result['content']) : '', /requestedSchema is required in form mode/);
    assert.deepEqual(inputs, {});
  });

  test('malformed params are refused naming what is wrong', () => {
    const cases: Array<[InputRequest, RegExp]> = [
      [{ method: 'elicitation/create', params: { requestedSchema: { type: 'object', properties: {} } } }, /params\.message must be a string/],
      [{ method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'array', properties: {} } } }, /requestedSchema\.type must be "object"/],
      [{ method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object' } } }, /requestedSchema\.properties must be an object/],
      [
        { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: { address: { type: 'object', properties: {} } } } } },
        /properties\.address\.type must be .*primitive fields only/,
      ],
      [{ method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: { n: { type: 'number', minimum: 'low' } } } } }, /properties\.n\.minimum must be a number/],
      [{ method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: {}, required: 'n' } } }, /required must be an array of strings/],
      [{ method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'not a url' } }, /params\.url must be an absolute URL/],
      [{ method: 'elicitation/create', params: { mode: 'popup', message: 'm' } }, /params\.mode must be "form" or "url"/],
      [{ method: 'sampling/createMessage', params: { messages: [] } }, /params\.maxTokens must be an integer/],
      [{ method: 'sampling/createMessage', params: { messages: [{ role: 'system', content: { type: 'text', text: 'x' } }], maxTokens: 5 } }, /messages\[0\]\.role/],
      [{ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: 'hi' }], maxTokens: 5 } }, /messages\[0\]\.content must be a content block/],
    ];
    for (const [request, message] of cases) {
      assert.throws(() => checkInputRequest('k', request), (e: unknown) => e instanceof InvalidInputRequestError && e.code === -32602 && message.test(e.message), JSON.stringify(request));
    }
  });

  test('every request shape the protocol defines is admitted', () => {
    const requests: InputRequest[] = [
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Who?',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', title: 'Name', minLength: 1, format: 'email' },
              age: { type: 'integer', minimum: 0 },
              ok: { type: 'boolean', default: true },
              colour: { type: 'string', enum: ['red', 'blue'] },
              size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }] },
              tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
            },
            required: ['name'],
          },
        },
      },
      { method: 'elicitation/create', params: { message: 'No fields', requestedSchema: { type: 'object', properties: {} } } },
      { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/auth' } },
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 100, temperature: 0.2 } },
      { method: 'roots/list', params: {} },
    ];
    for (const request of requests) checkInputRequest('k', request);
  });
});

describe('input requests respect the creating request\'s client capabilities', () => {
  const form = { message: 'Go?', requestedSchema: { type: 'object' as const, properties: {} } };
  const sampling = { messages: [{ role: 'user' as const, content: { type: 'text', text: 'hi' } }], maxTokens: 10 };

  test('input a tasks-only request did not declare is refused with InputNotSupportedError naming what is missing', async () => {
    const cases: Array<[string, (ctx: TaskContext) => Promise<unknown>, ClientCapabilities]> = [
      ['form elicitation', (ctx) => ctx.elicit('k', form), { elicitation: { form: {} } }],
      ['url elicitation', (ctx) => ctx.elicit('k', { mode: 'url', message: 'Sign in', url: 'https://example.com/a' }), { elicitation: { url: {} } }],
      ['sampling', (ctx) => ctx.sample('k', sampling), { sampling: {} }],
      ['sampling with tools', (ctx) => ctx.sample('k', { ...sampling, tools: [{ name: 't', inputSchema: { type: 'object' } }] }), { sampling: { tools: {} } }],
      ['roots', (ctx) => ctx.roots('k'), { roots: {} }],
    ];
    for (const [what, ask, requiredCapabilities] of cases) {
      const { task, inputs, structured } = await outcomeOfAsk(ask, TASKS_ONLY);
      assert.equal(task.status, 'completed', what);
      assert.deepEqual(structured, { name: InputNotSupportedError.name, code: -32021, data: { requiredCapabilities } }, what);
      assert.deepEqual(inputs, {}, `${what}: nothing stored`);
    }
  });

  test('a declared capability lets the input through; a bare elicitation declaration means form mode only', async () => {
    const declared: ClientCapabilities = { elicitation: {}, sampling: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const asked = await outcomeOfAsk((ctx) => ctx.elicit('k', form), declared);
    assert.equal(asked.task.status, 'input_required');
    const sampled = await outcomeOfAsk((ctx) => ctx.sample('k', sampling), declared);
    assert.equal(sampled.task.status, 'input_required');
    const url = await outcomeOfAsk((ctx) => ctx.elicit('k', { mode: 'url', message: 'm', url: 'https://example.com' }), declared);
    assert.deepEqual(url.structured, { name: InputNotSupportedError.name, code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } });
  });

  test('an uncaught InputNotSupportedError fails the task with -32021, as the inline path refuses the request', async () => {
    const { rt } = runtime();
    const record = await rt.start({ owner: owner(), tool: 'ask', args: {}, clientCapabilities: TASKS_ONLY, execute: async (_a, ctx) => text((await ctx.elicit('k', form)).action) });
    const task = await until(rt, record, ended);
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.status === 'failed' && task.error['data'], { requiredCapabilities: { elicitation: { form: {} } } });
    assert.equal(task.status === 'failed' && task.error.code, -32021);
  });
});
