import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyTaskTool } from '@mcp-tasks/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { ConfigFileError } from '../config-file/config-file-error.js';

/** What a module of in-process task tools exports (named, or as its default export). */
export interface GatewayModule {
  readonly tools?: readonly AnyTaskTool[];
  /** Registers ordinary (never-task) tools on each request's server. */
  readonly register?: (server: McpServer) => void;
}

/** The tools of every module, in order; a module that is not one is refused naming it (exit 2). */
export async function loadModules(specifiers: readonly string[], directory: string): Promise<Required<GatewayModule>> {
  const tools: AnyTaskTool[] = [];
  const registers: Array<(server: McpServer) => void> = [];
  for (const [index, specifier] of specifiers.entries()) {
    const url = specifier.startsWith('.') || path.isAbsolute(specifier) ? pathToFileURL(path.resolve(directory, specifier)).href : specifier;
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(url)) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigFileError(`The module at modules[${index}] (${specifier}) cannot be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}.`);
    }
    const module = (loaded['tools'] || loaded['register'] ? loaded : loaded['default']) as GatewayModule | undefined;
    if (!module || (module.tools !== undefined && !Array.isArray(module.tools)) || (module.register !== undefined && typeof module.register !== 'function') || (!module.tools && !module.register)) {
      throw new ConfigFileError(`The module at modules[${index}] (${specifier}) exports neither tools (an array of task tools) nor register (a function).`);
    }
    tools.push(...(module.tools ?? []));
    if (module.register) registers.push(module.register);
  }
  return { tools, register: (server) => registers.forEach((register) => register(server)) };
}
