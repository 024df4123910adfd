import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PlainCall } from './plain-task-tool.js';

/** The gateway as a client of a plain upstream: it declares sampling, elicitation and roots, which a task can ask its caller for. */
export function plainClient(): Client {
  return new Client({ name: 'mcp-tasks-gateway', version: '0.1.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: false } } });
}

/** Calls a plain tool on `client`: its progress to `call`, the abort of `call.signal` sent upstream as `notifications/cancelled`. */
export async function callPlainTool(client: Client, tool: string, args: Record<string, unknown>, call: PlainCall): Promise<CallToolResult> {
  return (await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallToolResultSchema, {
    signal: call.signal,
    onprogress: (progress) => call.onProgress(progress.progress, progress.total, progress.message),
    // A plain tool may run as long as its task: a progress notification or an answer keeps it alive.
    timeout: 24 * 60 * 60 * 1000,
    resetTimeoutOnProgress: true,
  })) as CallToolResult;
}
