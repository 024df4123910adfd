import { logSafe, type Logger } from '@mcp-tasks/core';
import type { AnyTaskTool } from '@mcp-tasks/server';
import type { UpstreamConfig } from '../config-file/config-schema.js';
import { plainTaskTool } from '../stdio/plain-task-tool.js';
import { idempotentOf, prefixOf } from '../stdio/start-stdio-upstreams.js';
import { HttpPlainUpstream } from './http-plain-upstream.js';
import { Http2026PlainUpstream } from './http-2026-plain-upstream.js';

/** How long a starting node waits for a 2025-11-25 upstream's tool list. */
const LIST_MS = 10_000;

/** The task tools the plain tools of 2025-11-25 HTTP upstreams became, and which tools they are by upstream. */
export interface HttpPlainTools {
  readonly tools: ReadonlyArray<{ readonly tool: AnyTaskTool; readonly from: string }>;
  /** Upstream tool names served as task tools here, by upstream name: the proxy's relay leaves them out. */
  readonly plain: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Lists each HTTP upstream of the file as a 2025-11-25 client and serves its plain tools (no task
 * support of their own) as optional task tools run from this gateway, as a stdio upstream's are;
 * a 2026-07-28 upstream's are then called as that revision. An upstream that does not list its
 * tools so in time (a 2026-07-28 server that serves no 2025-11-25 client) is said and left to the
 * proxy's relay (its plain tools then answer inline).
 */
export async function startHttpPlainTools(configs: readonly UpstreamConfig[], logger: Logger): Promise<HttpPlainTools> {
  const tools: Array<{ tool: AnyTaskTool; from: string }> = [];
  const plain = new Map<string, Set<string>>();
  await Promise.all(
    configs.map(async (config) => {
      if (config.url === undefined) return;
      const options = { name: config.name, url: config.url, ...(config.token ? { token: config.token } : {}) };
      const legacy = new HttpPlainUpstream(options);
      // A 2026-07-28 listing says nothing of task support (each call decides): the 2025-11-25
      // listing of a server that serves both revisions tells its plain tools apart.
      const upstream = config.revision === '2025-11-25' ? legacy : new Http2026PlainUpstream(options);
      let listed;
      try {
        listed = await legacy.listTools(AbortSignal.timeout(LIST_MS));
      } catch (error) {
        logger.warn({ upstream: config.name, err: logSafe(error instanceof Error ? error.message : error) }, 'the HTTP upstream did not list its tools as 2025-11-25 at start: its plain tools are relayed inline, not run as tasks');
        return;
      }
      const served = { prefix: prefixOf(config), idempotent: idempotentOf(config) };
      const names = new Set<string>();
      for (const tool of listed) {
        const support = tool.execution?.taskSupport;
        if (support !== undefined && support !== 'forbidden') continue;
        names.add(tool.name);
        tools.push({ tool: plainTaskTool(upstream, tool, served), from: `upstream ${config.name} (${tool.name})` });
      }
      plain.set(config.name, names);
    }),
  );
  return { tools, plain };
}
