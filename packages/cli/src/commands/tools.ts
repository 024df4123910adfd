import type { Command } from '../command.js';
import { UsageError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { describeType } from '../call/call-arguments.js';
import { chooseRevision } from '../call/choose-revision.js';
import { LegacyHttpClient } from '../call/legacy-http-client.js';
import { RpcError, TransportError, type JsonObject } from '../call/json-rpc-types.js';
import { listTools } from '../call/tool-listing.js';
import { printable, printableIo, terminalJson } from '../printable.js';

export const toolsCommand: Command = {
  name: 'tools',
  summary: 'list the tools of an MCP server: names, descriptions, task support, arguments',
  positionals: 'URL',
  usage: `Usage: mcp-tasks tools URL [--token T] [--json]

Lists the tools the MCP server at URL offers (tools/list, every page), each with its
description, whether it runs as a task (execution.taskSupport: required, optional or
forbidden, as a 2025-11-25 listing gives it; the 2026-07-28 one leaves it to each call) and
its arguments: name, type, whether required, description. Speaks 2026-07-28
or 2025-11-25, whichever the server does (as mcp-tasks call).
  --token <token>        bearer token (default: the MCP_TASKS_TOKEN variable)
  --json                 print the tools as tools/list gives them`,
  options: { token: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals, io: givenIo, env }) {
    const io = printableIo(givenIo);
    const [url, extra] = positionals;
    if (url === undefined) throw new UsageError('mcp-tasks tools needs the server\'s URL, e.g. http://127.0.0.1:3000/mcp');
    if (extra !== undefined) throw new UsageError(`mcp-tasks tools takes one URL (got ${JSON.stringify(extra)} too)`);
    if (!/^https?:\/\//.test(url)) throw new UsageError(`the URL must start with http:// or https:// (got ${JSON.stringify(url)})`);
    const token = typeof values['token'] === 'string' ? values['token'] : env['MCP_TASKS_TOKEN'] || undefined;
    const signal = AbortSignal.timeout(30_000);
    const chosen = await chooseRevision(url, token, signal);
    try {
      const tools = await listTools(chosen.client, signal);
      if (tools !== undefined && chosen.revision === '2026-07-28') await addTaskSupport(url, token, tools, signal);
      if (tools === undefined) {
        io.err(`mcp-tasks: ${url} answered tools/list with an error: it lists no tools`);
        return ExitCode.failed;
      }
      if (values['json'] === true) io.out(terminalJson(tools));
      else io.out(tools.length === 0 ? `${url} lists no tools.` : tools.map(toolText).join('\n\n'));
      return ExitCode.ok;
    } catch (error) {
      if (error instanceof TransportError || error instanceof RpcError) {
        io.err(`mcp-tasks: ${error.message}`);
        return ExitCode.failed;
      }
      throw error;
    } finally {
      if (chosen.revision === '2025-11-25') await chosen.client.close();
    }
  },
};

/**
 * The 2026-07-28 listing says nothing of task support (the server decides per call); a server
 * that also speaks 2025-11-25 lists `execution.taskSupport` there, which is added by name.
 */
async function addTaskSupport(url: string, token: string | undefined, tools: JsonObject[], signal: AbortSignal): Promise<void> {
  if (tools.some((tool) => tool['execution'] !== undefined)) return;
  const legacy = new LegacyHttpClient(url, token);
  try {
    await legacy.initialize(signal);
    const listed = await listTools(legacy, signal);
    if (listed === undefined) return;
    const execution = new Map(listed.map((tool) => [tool['name'], tool['execution']]));
    // In that revision a tool listed without `execution` does not run as a task.
    for (const tool of tools) if (execution.has(tool['name'])) tool['execution'] = execution.get(tool['name']) ?? { taskSupport: 'forbidden' };
  } catch (error) {
    if (!(error instanceof TransportError || error instanceof RpcError)) throw error;
  } finally {
    await legacy.close();
  }
}

/** One tool as text: its name and task support, its description, then one line per argument. */
function toolText(tool: JsonObject): string {
  const support = tool['execution']?.['taskSupport'];
  const lines = [`${printable(String(tool['name']))}  (${typeof support === 'string' ? `task: ${printable(support)}` : 'task support not listed: the server decides per call'})`];
  if (typeof tool['description'] === 'string') lines.push(`  ${printable(tool['description'])}`);
  const schema = (tool['inputSchema'] ?? {}) as JsonObject;
  const properties = Object.entries((schema['properties'] ?? {}) as Record<string, JsonObject>);
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  if (properties.length === 0) lines.push('  no arguments');
  for (const [name, property] of properties) {
    const fallback = property['default'] !== undefined ? `, default ${JSON.stringify(property['default'])}` : '';
    lines.push(`  --arg ${printable(name)}=…  ${printable(describeType(property))}${required.has(name) ? ' (required)' : fallback}`);
  }
  return lines.join('\n');
}
