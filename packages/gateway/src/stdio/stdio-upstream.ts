import { defaultLogger, logSafe, type Logger } from '@mcp-tasks/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { CallRouter } from './call-router.js';
import { callPlainTool, plainClient } from './plain-client.js';
import type { PlainCall } from './plain-task-tool.js';

/** Options of {@link StdioUpstream}. */
export interface StdioUpstreamOptions {
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The first restart waits this long, doubling up to {@link maxBackoffMs}. Default 200 ms. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How long the first start may take (spawn, initialize, tools/list). Default 30 000 ms. */
  readonly startTimeoutMs?: number;
  readonly logger?: Logger;
}

/**
 * One stdio MCP server, spawned by this node: initialized as a client that declares sampling,
 * elicitation and roots, restarted with backoff when it exits, stopped by {@link stop}. Every caller
 * of it on this node shares this one process.
 */
export class StdioUpstream {
  readonly name: string;
  readonly #options: StdioUpstreamOptions;
  readonly #logger: Logger;
  readonly #router = new CallRouter();
  readonly #listeners: Array<(tools: readonly Tool[]) => void> = [];
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #tools: readonly Tool[] = [];
  #stopped = false;
  #startedOnce = false;
  #failures = 0;
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(options: StdioUpstreamOptions) {
    this.name = options.name;
    this.#options = options;
    this.#logger = options.logger ?? defaultLogger();
  }

  /** Spawns the process and lists its tools (rejects when the first start fails). */
  async start(): Promise<readonly Tool[]> {
    const timeoutMs = this.#options.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.#connect(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`upstream ${this.name} did not start within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
    return this.#tools;
  }

  /** The tools it listed last. */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  /** Called with the new list after the upstream said `notifications/tools/list_changed`, and after each restart. */
  onToolsChanged(listener: (tools: readonly Tool[]) => void): void {
    this.#listeners.push(listener);
  }

  /** Calls a tool; the signal's abort sends `notifications/cancelled` upstream and rejects. */
  async call(tool: string, args: Record<string, unknown>, call: PlainCall): Promise<CallToolResult> {
    const client = await this.#ready();
    const release = this.#router.enter(call.asker);
    try {
      return await callPlainTool(client, tool, args, call);
    } finally {
      release();
    }
  }

  /** Stops the process and does not restart it (drain). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  async #ready(): Promise<Client> {
    if (this.#client) return this.#client;
    if (this.#stopped) throw new Error(`upstream ${this.name} is stopped`);
    return this.#connect();
  }

  #connect(): Promise<Client> {
    this.#connecting ??= this.#spawn().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  async #spawn(): Promise<Client> {
    const { command, args = [], env, cwd } = this.#options;
    const transport = new StdioClientTransport({
      command,
      args: [...args],
      // The SDK's safe default environment (PATH, HOME…) plus the configured variables: the node's own secrets stay out.
      ...(env ? { env: { ...safeEnvironment(), ...env } } : {}),
      ...(cwd ? { cwd } : {}),
      stderr: 'pipe',
    });
    const client = plainClient();
    client.setRequestHandler(ElicitRequestSchema, (request) => this.#router.ask('elicit', request.params as never) as never);
    client.setRequestHandler(CreateMessageRequestSchema, (request) => this.#router.ask('sample', request.params as never) as never);
    client.setRequestHandler(ListRootsRequestSchema, () => this.#router.ask('roots', undefined) as never);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.#refreshTools(client));
    transport.stderr?.on('data', (chunk: Buffer) => this.#logger.debug({ upstream: this.name, stderr: chunk.toString('utf8').slice(0, 2000) }, 'stdio upstream stderr'));
    client.onclose = () => this.#closed(client);
    try {
      await client.connect(transport);
      this.#tools = (await client.listTools()).tools;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new Error(`upstream ${this.name} (stdio) failed to start: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.#client = client;
    this.#failures = 0;
    this.#logger.info({ upstream: this.name, tools: this.#tools.length }, 'stdio upstream started');
    // A process started again may list other tools than the one before (a change it never said).
    if (this.#startedOnce) for (const listener of this.#listeners) listener(this.#tools);
    this.#startedOnce = true;
    return client;
  }

  async #refreshTools(client: Client): Promise<void> {
    try {
      this.#tools = (await client.listTools()).tools;
      for (const listener of this.#listeners) listener(this.#tools);
    } catch (error) {
      this.#logger.error({ upstream: this.name, err: logSafe(error instanceof Error ? error.message : error) }, 'the stdio upstream tools could not be listed again');
    }
  }

  #closed(client: Client): void {
    if (this.#client === client) this.#client = undefined;
    if (this.#stopped) return;
    this.#failures += 1;
    const delay = Math.min((this.#options.backoffMs ?? 200) * 2 ** (this.#failures - 1), this.#options.maxBackoffMs ?? 30_000);
    this.#logger.warn({ upstream: this.name, restartInMs: delay }, 'stdio upstream exited; restarting');
    clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      if (!this.#stopped && !this.#client) this.#connect().catch((error: unknown) => {
        this.#logger.error({ upstream: this.name, err: logSafe(error instanceof Error ? error.message : error) }, 'stdio upstream restart failed');
        this.#closed(client);
      });
    }, delay);
    this.#restartTimer.unref();
  }
}

/** What a spawned stdio server inherits of the node's environment without `env` (the SDK's default list). */
function safeEnvironment(): Record<string, string> {
  const keep = process.platform === 'win32' ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE'] : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
  return Object.fromEntries(keep.flatMap((key) => (process.env[key] === undefined || process.env[key]!.startsWith('()') ? [] : [[key, process.env[key]!]])));
}
