import { logSafe, type Logger } from '@mcp-tasks/core';
import { LiveTaskTools } from '@mcp-tasks/server';
import { collision, type ServedNames } from '../upstreams/served-names.js';
import type { StdioTool } from './start-stdio-upstreams.js';

/**
 * The stdio upstreams' task tools as served now: an upstream that changes its tool list
 * (`notifications/tools/list_changed`) is served its new list from the next request on, on this
 * node (each node has its own process, which tells it). A new name that another tool is served
 * under already is not served, and the error names both; the tool served first keeps the name.
 */
export class LiveStdioTools {
  readonly live: LiveTaskTools;
  /** The names served apart from the stdio upstreams' (modules, HTTP upstreams), fixed at start. */
  readonly #others: ServedNames;
  /** Each upstream's served tools, in the configuration's order. */
  readonly #served = new Map<string, readonly StdioTool[]>();
  readonly #logger: Logger;

  constructor(others: ServedNames, upstreams: readonly string[], tools: readonly StdioTool[], logger: Logger) {
    this.#others = others;
    this.#logger = logger;
    for (const upstream of upstreams) this.#served.set(upstream, []);
    for (const entry of tools) {
      this.#served.set(entry.upstream, [...(this.#served.get(entry.upstream) ?? []), entry]);
    }
    this.live = new LiveTaskTools(tools.map((entry) => entry.tool));
  }

  /** `upstream` lists `tools` now. */
  changed(upstream: string, tools: readonly StdioTool[]): void {
    const names = this.#others.copy();
    for (const [name, served] of this.#served) if (name !== upstream) for (const entry of served) names.claim(entry.tool.name, entry.from);
    const accepted: StdioTool[] = [];
    for (const entry of tools) {
      const before = names.claim(entry.tool.name, entry.from);
      if (before === undefined) accepted.push(entry);
      else this.#logger.error({ upstream, tool: entry.tool.name }, `${collision(entry.tool.name, before, entry.from)} The second is not served.`);
    }
    const was = new Set((this.#served.get(upstream) ?? []).map((entry) => entry.tool.name));
    const now = new Set(accepted.map((entry) => entry.tool.name));
    const served = new Map(this.#served).set(upstream, accepted);
    try {
      this.live.replace([...served.values()].flat().map((entry) => entry.tool));
      this.#served.set(upstream, accepted);
    } catch (error) {
      this.#logger.error({ upstream, err: logSafe(error instanceof Error ? error.message : error) }, 'the stdio upstream tool list could not be served; the one before stays');
      return;
    }
    const added = [...now].filter((name) => !was.has(name));
    const removed = [...was].filter((name) => !now.has(name));
    if (added.length + removed.length > 0) this.#logger.info({ upstream, added, removed }, 'the stdio upstream changed its tool list: the new list is served');
  }
}
