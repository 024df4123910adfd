import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { callPlainTool, plainClient } from '../stdio/plain-client.js';
import type { PlainCall } from '../stdio/plain-task-tool.js';

/** How long a finished call waits for its last messages (a cancel) to be sent, and for its session's DELETE. */
const SEND_GRACE_MS = 5_000;

/** Options of {@link HttpPlainUpstream}. */
export interface HttpPlainUpstreamOptions {
  readonly name: string;
  readonly url: string;
  /** The bearer token the gateway presents (its own credential). */
  readonly token?: string;
}

/**
 * The plain tools of a 2025-11-25 HTTP upstream, called from a task's run: each call is a session
 * of its own (a client that declares sampling, elicitation and roots), so the upstream's requests
 * on it belong to that call alone, its progress reaches that task, and an abort sends
 * `notifications/cancelled` on it. The proxy's relay keeps the upstream's task-making tools.
 */
export class HttpPlainUpstream {
  readonly name: string;
  readonly #options: HttpPlainUpstreamOptions;

  constructor(options: HttpPlainUpstreamOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Its tools with their task support, as a 2025-11-25 client lists them. */
  async listTools(signal?: AbortSignal): Promise<readonly Tool[]> {
    const { client, end } = await this.#session(signal);
    try {
      return (await client.listTools(undefined, signal ? { signal } : undefined)).tools;
    } finally {
      await end();
    }
  }

  /** Calls a tool; the signal's abort sends `notifications/cancelled` upstream and rejects. */
  async call(tool: string, args: Record<string, unknown>, call: PlainCall): Promise<CallToolResult> {
    const { client, end } = await this.#session(call.signal);
    client.setRequestHandler(ElicitRequestSchema, (request) => call.asker.ask('elicit', request.params) as never);
    client.setRequestHandler(CreateMessageRequestSchema, (request) => call.asker.ask('sample', request.params) as never);
    client.setRequestHandler(ListRootsRequestSchema, () => call.asker.ask('roots', undefined) as never);
    try {
      return await callPlainTool(client, tool, args, call);
    } finally {
      await end();
    }
  }

  /**
   * A connected client, and how to end its session: after the messages it is still sending (an
   * abort's notifications/cancelled is a POST of its own, which closing first would abort), with
   * a DELETE so that a stateful upstream keeps no session per call.
   */
  async #session(signal: AbortSignal | undefined): Promise<{ readonly client: Client; end(): Promise<void> }> {
    const { url, token } = this.#options;
    const client = plainClient();
    const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined);
    const sending = new Set<Promise<void>>();
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const sent = send(message, options);
      const settled = sent.then(
        () => undefined,
        () => undefined,
      );
      sending.add(settled);
      void settled.then(() => sending.delete(settled));
      return sent;
    };
    const end = async () => {
      await bounded(Promise.all(sending));
      await bounded(transport.terminateSession().catch(() => undefined));
      await client.close().catch(() => undefined);
    };
    try {
      await client.connect(transport, signal ? { signal } : undefined);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new Error(`upstream ${this.name} (HTTP) could not be reached: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { client, end };
  }
}

/** Waits for `promise`, at most {@link SEND_GRACE_MS}: ending a session never hangs a task. */
async function bounded(promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, SEND_GRACE_MS)))]);
  clearTimeout(timer);
}
