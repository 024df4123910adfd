import path from 'node:path';
import type { Logger } from '@mcp-tasks/core';
import type { AnyTaskTool } from '@mcp-tasks/server';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamConfig } from '../config-file/config-schema.js';
import { plainTaskTool } from './plain-task-tool.js';
import { StdioUpstream } from './stdio-upstream.js';

/** A served task tool and where it comes from (named in a collision). */
export interface SourcedTool {
  readonly tool: AnyTaskTool;
  readonly from: string;
}

/** A stdio upstream's tool as served. */
export interface StdioTool extends SourcedTool {
  readonly upstream: string;
}

/** The stdio upstreams this node spawned and the task tools their plain tools became. */
export interface StartedStdioUpstreams {
  readonly upstreams: readonly StdioUpstream[];
  /** Each task tool with the upstream it comes from, as listed at start. */
  readonly tools: readonly StdioTool[];
  /** Called with an upstream's task tools after it said `notifications/tools/list_changed` (listed again). */
  onToolsChanged(listener: (upstream: string, tools: readonly StdioTool[]) => void): void;
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
  const tools: StdioTool[] = [];
  const listeners: Array<(upstream: string, tools: readonly StdioTool[]) => void> = [];
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
      const sourced = (listed: readonly Tool[]) => listed.map((tool) => ({ tool: plainTaskTool(upstream, tool, options), from: `upstream ${config.name} (${tool.name})`, upstream: config.name }));
      tools.push(...sourced(listed));
      upstream.onToolsChanged((now) => {
        for (const listener of listeners) listener(config.name, sourced(now));
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { upstreams, tools, onToolsChanged: (listener) => void listeners.push(listener), stop };
}
