import { defaultLogger, logSafe } from '@mcp-tasks/core';
import { MountedTool } from './mounted-tool.js';
import { StreamableHttp2025Client } from './streamable-http-2025.js';
import { StreamableHttp2026Client } from './streamable-http-2026.js';
import type { UpstreamClient, UpstreamTool } from './upstream-client.js';
import { UpstreamError } from './upstream-error.js';
import { UpstreamPacer, type UpstreamRateOptions } from './upstream-pacer.js';
import { UpstreamWatch, type UpstreamWatchOptions } from './upstream-watch.js';
import { UpstreamIdentityResolver, type UpstreamIdentity } from './upstream-identity.js';
import { learnedCapacity, quotaOfRefusal } from './learned-capacity.js';
import { upstreamCapacity, type UpstreamCapacity, type UpstreamCapacityOptions } from './upstream-share.js';

/** Options of {@link proxyUpstream}. */
export interface ProxyUpstreamOptions {
  /** The upstream's name: what errors and the proxy's task rows call it (never its URL). Letters, digits, `_` and `-`. */
  readonly name: string;
  /** Its Streamable HTTP endpoint. */
  readonly url?: string;
  /** The bearer token the proxy presents upstream: the proxy's own credential for it. */
  readonly token?: string;
  /** The exposed name of an upstream tool. Default: `<name>_<tool>`. */
  readonly rename?: (tool: string) => string;
  /** Which upstream tools to serve. Default: all. */
  readonly filter?: (tool: UpstreamTool) => boolean;
  /** How long a fetched tool list is served before it is fetched again. Default 60 000 ms. */
  readonly toolsTtlMs?: number;
  /** How long one upstream request may take. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** The protocol revision the upstream speaks. Default `2026-07-28` (with the tasks extension). */
  readonly revision?: '2026-07-28' | '2025-11-25';
  /** Largest upstream answer read, counted while it streams in (bytes; a 2026-07-28 upstream). Default 8 MiB. */
  readonly maxResponseBytes?: number;
  /** Most tools its `tools/list` may list (all pages): a longer list is refused. Default 1 000. */
  readonly maxTools?: number;
  /** Largest `inputSchema` or `outputSchema` served (bytes of JSON): a tool with a larger one is not served. Default 64 KiB. */
  readonly maxSchemaBytes?: number;
  /** Largest tool list served (bytes of JSON of every served tool's listing): every caller's `tools/list` carries it. A longer one is refused and the cached list kept. Default 2 MiB. */
  readonly maxToolListBytes?: number;
  /**
   * What the gateway may hold of this upstream (its quota for the gateway's credential), shared
   * fairly between the gateway's callers (see {@link fitsShare}). Absent: the upstream's own
   * refusals are the only bound. Needs a store that counts live tasks (`PostgresTaskStore`).
   */
  readonly capacity?: UpstreamCapacityOptions;
  /** The upstream's rate for the gateway's credential, and the share of it one node's relays may use (their polls spaced evenly). Absent: relays poll at the upstream's `pollIntervalMs` unpaced. */
  readonly rate?: UpstreamRateOptions;
  /**
   * How this node follows the upstream tasks it relays: one `subscriptions/listen` stream for all
   * of them where the upstream offers it (`listen`, default true), else polls at the upstream's
   * `pollIntervalMs`, spread and paced.
   */
  readonly follow?: UpstreamWatchOptions;
  /** Whose identity the upstream sees for each caller (see {@link UpstreamIdentity}). Default `'gateway'`. */
  readonly identity?: UpstreamIdentity;
  /** A client of its own, instead of the one built from `url` and `revision`. */
  readonly client?: UpstreamClient;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Callers' own upstream credentials with a client kept at once (each may hold a listen stream). */
const MAX_IDENTITIES = 256;
/** The default bound of one tool's schemas: every caller's `tools/list` carries them. */
const DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024;
const DEFAULT_MAX_TOOL_LIST_BYTES = 2 * 1024 * 1024;

/**
 * An upstream MCP server mounted next to a host's own tools: its tools (fetched and cached for a
 * bounded time), the client that reaches it, and the names it serves them under.
 */
export class UpstreamMount {
  readonly name: string;
  readonly client: UpstreamClient;
  /** Paces the relays of this node towards it. */
  readonly pacer: UpstreamPacer;
  /** Follows the upstream tasks this node relays (listen streams, else spread polls). */
  readonly watch: UpstreamWatch;
  /** What the gateway may hold of it, when configured. */
  readonly #configuredCapacity: UpstreamCapacity | undefined;
  /** What the upstream said the gateway may hold (its quota in a refusal), when not configured. */
  #learnedCapacity: UpstreamCapacity | undefined;
  readonly #identity: UpstreamIdentityResolver;
  /** The clients (and their watches) of callers' own upstream credentials, by token; the least recently used dropped first. */
  readonly #identities = new Map<string, { readonly client: UpstreamClient; readonly watch: UpstreamWatch }>();
  readonly #connect: (token: string) => UpstreamClient;
  readonly #follow: UpstreamWatchOptions | undefined;
  readonly #rename: (tool: string) => string;
  readonly #filter: (tool: UpstreamTool) => boolean;
  readonly #ttlMs: number;
  readonly #maxSchemaBytes: number;
  readonly #maxListBytes: number;
  #tools: { readonly at: number; readonly byName: ReadonlyMap<string, MountedTool> } | undefined;
  #refresh: Promise<ReadonlyMap<string, MountedTool>> | undefined;
  readonly #listeners: Array<(tools: readonly MountedTool[]) => void> = [];

  constructor(options: ProxyUpstreamOptions) {
    if (!NAME.test(options.name)) throw new TypeError(`proxyUpstream: name must be 1-64 letters, digits, _ or -, got ${JSON.stringify(options.name)}`);
    if (!options.client && !options.url) throw new TypeError(`proxyUpstream(${options.name}): pass url (or a client)`);
    this.name = options.name;
    const connection = {
      name: options.name,
      url: options.url!,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
      ...(options.maxTools === undefined ? {} : { maxTools: options.maxTools }),
    };
    const connect = (token: string | undefined): UpstreamClient => {
      const withToken = { ...connection, ...(token === undefined ? {} : { token }) };
      return options.revision === '2025-11-25' ? new StreamableHttp2025Client(withToken) : new StreamableHttp2026Client(withToken);
    };
    this.client = options.client ?? connect(options.token);
    this.#identity = new UpstreamIdentityResolver(options.name, options.identity);
    if (options.client && this.#identity.separates) throw new TypeError(`proxyUpstream(${options.name}): identity needs url (a client of its own carries one credential)`);
    this.#connect = connect;
    this.#follow = options.follow;
    this.#rename = options.rename ?? ((tool) => `${options.name}_${tool}`);
    this.#filter = options.filter ?? (() => true);
    this.#ttlMs = options.toolsTtlMs ?? 60_000;
    this.#maxSchemaBytes = options.maxSchemaBytes ?? DEFAULT_MAX_SCHEMA_BYTES;
    this.#maxListBytes = options.maxToolListBytes ?? DEFAULT_MAX_TOOL_LIST_BYTES;
    this.pacer = new UpstreamPacer(options.name, options.rate);
    this.watch = new UpstreamWatch(options.name, this.client, this.pacer, options.follow);
    this.#configuredCapacity = options.capacity === undefined ? undefined : upstreamCapacity(options.name, options.capacity);
    if (!(Number.isSafeInteger(this.#ttlMs) && this.#ttlMs > 0)) throw new RangeError(`proxyUpstream(${options.name}): toolsTtlMs must be a positive integer`);
  }

  /**
   * The client (and the watch of its relayed tasks) that acts upstream for the caller `subject`:
   * the caller's own credential when callers are apart upstream (`identity`) and one is known,
   * else the gateway's own. `callerToken`: the bearer token of the request at hand.
   */
  via(subject: string | undefined, callerToken?: string): { readonly client: UpstreamClient; readonly watch: UpstreamWatch; readonly own: boolean } {
    const token = this.#identity.tokenOf(subject, callerToken);
    if (token === undefined) return { client: this.client, watch: this.watch, own: false };
    let identity = this.#identities.get(token);
    if (identity) {
      this.#identities.delete(token);
    } else {
      const client = this.#connect(token);
      identity = { client, watch: new UpstreamWatch(this.name, client, this.pacer, this.#follow) };
      if (this.#identities.size >= MAX_IDENTITIES) {
        const [oldest, dropped] = this.#identities.entries().next().value as [string, { watch: UpstreamWatch }];
        this.#identities.delete(oldest);
        dropped.watch.stop();
      }
    }
    this.#identities.set(token, identity);
    return { ...identity, own: true };
  }

  /** Stops following relayed tasks on every identity's streams. */
  stopWatching(): void {
    this.watch.stop();
    for (const identity of this.#identities.values()) identity.watch.stop();
  }

  /**
   * What the gateway may hold of it: the configured `capacity`, else what the upstream itself
   * said (the quota in its refusal of a task), shared by the same fairness rule.
   */
  get capacity(): UpstreamCapacity | undefined {
    return this.#configuredCapacity ?? this.#learnedCapacity;
  }

  /**
   * The upstream refused a task (-32600): when it says how many tasks the gateway may hold, that
   * becomes the capacity shared between callers from now on (unless one is configured).
   */
  learnFromRefusal(code: number, message: string, data: unknown): void {
    if (this.#configuredCapacity) return;
    const quota = quotaOfRefusal(code, message, data);
    if (quota === undefined || quota === this.#learnedCapacity?.maxTasks) return;
    this.#learnedCapacity = learnedCapacity(quota);
    defaultLogger().info({ upstream: this.name, maxTasks: quota }, 'the upstream told its task quota; it is shared between callers from now on');
  }

  /** Calls `listener` with the tools each time a list is fetched (the relay registers their names for claiming). */
  onTools(listener: (tools: readonly MountedTool[]) => void): void {
    this.#listeners.push(listener);
    if (this.#tools) listener([...this.#tools.byName.values()]);
  }

  /**
   * The mounted tools. Once a list was fetched it is served at once, and fetched again in the
   * background when older than `toolsTtlMs` (a slow or absent upstream never delays a listing it
   * can serve from the cache); before that, the first fetch is awaited. One fetch at a time.
   */
  async tools(): Promise<ReadonlyMap<string, MountedTool>> {
    if (this.#tools) {
      if (Date.now() - this.#tools.at >= this.#ttlMs) this.#refreshing().catch(() => undefined);
      return this.#tools.byName;
    }
    return this.#refreshing();
  }

  #refreshing(): Promise<ReadonlyMap<string, MountedTool>> {
    this.#refresh ??= this.#fetch().finally(() => (this.#refresh = undefined));
    return this.#refresh;
  }

  /** The mounted tool served as `exposed`, or `undefined` when this upstream serves no such tool. */
  async find(exposed: string): Promise<MountedTool | undefined> {
    return (await this.tools()).get(exposed);
  }

  /**
   * Fetches the tool list until it succeeds (from `retryMs`, doubling up to a minute), so a node
   * can claim relays released by a lost node before any request lists tools.
   */
  warmUp(retryMs = 2_000): { stop(): void } {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let delay = retryMs;
    const attempt = (): void => {
      this.tools().catch((error: unknown) => {
        if (stopped) return;
        defaultLogger().error({ upstream: this.name, retryInMs: delay, err: logSafe(error instanceof UpstreamError ? error.message : error) }, 'upstream tools/list failed, retrying');
        timer = setTimeout(attempt, delay);
        timer.unref();
        delay = Math.min(delay * 2, 60_000);
      });
    };
    attempt();
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  async #fetch(): Promise<ReadonlyMap<string, MountedTool>> {
    const listed = await this.client.listTools();
    const byName = new Map<string, MountedTool>();
    let listBytes = 0;
    for (const tool of listed) {
      if (!this.#filter(tool)) continue;
      const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema), 'utf8') + Buffer.byteLength(JSON.stringify(tool.outputSchema ?? {}), 'utf8');
      if (schemaBytes > this.#maxSchemaBytes) {
        defaultLogger().error({ upstream: this.name, tool: logSafe(tool.name), schemaBytes, maxSchemaBytes: this.#maxSchemaBytes }, 'an upstream tool is not served: its schemas are over maxSchemaBytes');
        continue;
      }
      const exposed = this.#rename(tool.name);
      if (byName.has(exposed)) continue;
      const mounted = new MountedTool(exposed, tool);
      listBytes += Buffer.byteLength(JSON.stringify(mounted.listing(true)), 'utf8');
      if (listBytes > this.#maxListBytes) throw new UpstreamError(this.name, `its tool list is over maxToolListBytes (${this.#maxListBytes} bytes); the cached list, if any, is kept`, { retryable: false });
      byName.set(exposed, mounted);
    }
    this.#tools = { at: Date.now(), byName };
    for (const listener of this.#listeners) listener([...byName.values()]);
    return byName;
  }
}

/** Mounts an upstream MCP server's tools: pass the result in `upstreams` of `McpTasks.handler`. */
export function proxyUpstream(options: ProxyUpstreamOptions): UpstreamMount {
  return new UpstreamMount(options);
}
