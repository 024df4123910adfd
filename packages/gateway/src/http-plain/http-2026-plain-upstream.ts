import { ErrorCode, JsonRpcError, type JsonObject } from '@mcp-tasks/core';
import { StreamableHttp2026Client } from '@mcp-tasks/server';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PlainCall } from '../stdio/plain-task-tool.js';

/** What the gateway declares upstream: every kind of input a task can ask its caller for. */
const CAPABILITIES: JsonObject = { sampling: {}, elicitation: { form: {} }, roots: {} };
/** A plain tool may run as long as its task; its task's cancel ends the request. */
const CALL_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Rounds of input one call may ask before it is refused (an upstream that asks forever). */
const MAX_ROUNDS = 100;

/** Options of {@link Http2026PlainUpstream}. */
export interface Http2026PlainUpstreamOptions {
  readonly name: string;
  readonly url: string;
  /** The bearer token the gateway presents (its own credential). */
  readonly token?: string;
}

/**
 * The plain tools of a 2026-07-28 HTTP upstream, called from a task's run: each call a stateless
 * request without the tasks extension; input the upstream asks on the request (`input_required`
 * with its `requestState`) becomes the task's `input_required`, and the answers go back on the
 * next round; the task's cancel drops the request, which ends it upstream.
 */
export class Http2026PlainUpstream {
  readonly name: string;
  readonly #client: StreamableHttp2026Client;

  constructor(options: Http2026PlainUpstreamOptions) {
    this.name = options.name;
    this.#client = new StreamableHttp2026Client({ name: options.name, url: options.url, ...(options.token ? { token: options.token } : {}), timeoutMs: CALL_TIMEOUT_MS, clientInfo: { name: 'mcp-tasks-gateway', version: '0.1.0' } });
  }

  async call(tool: string, args: Record<string, unknown>, call: PlainCall): Promise<CallToolResult> {
    let inputResponses: JsonObject | undefined;
    let requestState: string | undefined;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const outcome = await this.#client.callTool(tool, args as JsonObject, {
        tasks: false,
        clientCapabilities: CAPABILITIES,
        signal: call.signal,
        ...(inputResponses === undefined ? {} : { inputResponses }),
        ...(requestState === undefined ? {} : { requestState }),
      });
      if (outcome.kind === 'result') return outcome.result as CallToolResult;
      if (outcome.kind === 'task') throw new JsonRpcError(ErrorCode.InternalError, `upstream ${this.name} made a task of ${tool}, which it lists as a plain tool`);
      const answers: JsonObject = {};
      for (const [key, request] of Object.entries(outcome.inputRequests)) answers[key] = (await call.asker.ask(kindOf(request['method']), request['params'])) as JsonObject;
      inputResponses = answers;
      requestState = outcome.requestState;
    }
    throw new JsonRpcError(ErrorCode.InternalError, `upstream ${this.name} asked for input more than ${MAX_ROUNDS} times in one call of ${tool}`);
  }
}

function kindOf(method: unknown): 'elicit' | 'sample' | 'roots' {
  if (method === 'sampling/createMessage') return 'sample';
  if (method === 'roots/list') return 'roots';
  return 'elicit';
}
