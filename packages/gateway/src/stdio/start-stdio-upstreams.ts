import path from 'node:path';
import type { Logger } from '@mcp-tasks/core';
import type { AnyTaskTool } from '@mcp-tasks/server';
import type { UpstreamConfig } from '../config-file/config-schema.js';
import { plainTaskTool } from './plain-task-tool.js';
import { StdioUpstream } from './stdio-upstream.js';

/** The stdio upstreams this node spawned and the task tools their plain tools became. */
export interface StartedStdioUpstreams {
  readonly upstreams: readonly StdioUpstream[];
  /** Each task tool with the upstream it comes from. */
  readonly tools: ReadonlyArray<{ readonly tool: AnyTaskTool; readonly from: string }>;
  stop(): Promise<void>;
}

/** The tool name prefix of an upstream: `prefix`, or `<name>_`. */
export function prefixOf(upstream: Pick<UpstreamConfig, 'name' | 'prefix'>): string {
  return upstream.prefix ?? `${upstream.name}_`;
}

/** Whether a plain tool of the upstream is run again by another node when its node dies. */
export function idempotentOf(upstream: Pick<UpstreamConfig, 'retry'>): (tool: string) => boolean {
  const retry = upstream.retry;
  return (tool) => (typeof retry === 'string' ? retry === 'idempotent' : retry?.[tool] === 'idempotent');
}

/** Spawns every stdio upstream of the configuration (each node its own processes) and lists their tools. */
export async function startStdioUpstreams(configs: readonly UpstreamConfig[], directory: string, logger: Logger): Promise<StartedStdioUpstreams> {
  const upstreams: StdioUpstream[] = [];
  const tools: Array<{ tool: AnyTaskTool; from: string }> = [];
  const stop = async () => {
    await Promise.all(upstreams.map((upstream) => upstream.stop()));
  };
  try {
    for (const config of configs) {
      if (config.command === undefined) continue;
      const upstream = new StdioUpstream({
        name: config.name,
        command: config.command,
        ...(config.args ? { args: config.args } : {}),
        ...(config.env ? { env: config.env } : {}),
        cwd: path.resolve(directory, config.cwd ?? '.'),
        logger,
      });
      upstreams.push(upstream);
      const listed = await upstream.start();
      const options = { prefix: prefixOf(config), ...(config.scopes ? { scopes: config.scopes } : {}), idempotent: idempotentOf(config) };
      tools.push(...listed.map((tool) => ({ tool: plainTaskTool(upstream, tool, options), from: `upstream ${config.name} (${tool.name})` })));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { upstreams, tools, stop };
}
