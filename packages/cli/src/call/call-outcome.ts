import type { CommandIo } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import type { JsonObject } from './mcp-http-client.js';
import { printable, terminalJson } from '../printable.js';

/**
 * Prints what a call ended with and returns the exit code: a tool result's text on stdout (the
 * whole result with `--json`), exit 0; a result with `isError` on stderr, exit 5; a failed or
 * cancelled task on stderr, exit 1. What a server wrote is shown without its control characters
 * (escape sequences); `--json` keeps them, escaped.
 */
export function reportOutcome(outcome: { result: JsonObject } | { task: JsonObject }, json: boolean, io: CommandIo): number {
  if ('task' in outcome && outcome.task['status'] !== 'completed') {
    const task = outcome.task;
    if (json) io.out(terminalJson(task));
    const id = printable(String(task['taskId']));
    if (task['status'] === 'failed') {
      const error = (task['error'] ?? {}) as JsonObject;
      io.err(`mcp-tasks: task ${id} failed: ${printable(String(error['message'] ?? task['statusMessage'] ?? 'no error given'))}${error['code'] !== undefined ? ` (JSON-RPC error ${printable(String(error['code']))})` : ''}`);
    } else {
      io.err(`mcp-tasks: task ${id} was cancelled${typeof task['statusMessage'] === 'string' ? `: ${printable(task['statusMessage'])}` : ''}`);
    }
    return ExitCode.failed;
  }
  const result = ('task' in outcome ? (outcome.task['result'] ?? {}) : outcome.result) as JsonObject;
  const text = resultText(result);
  if (json) io.out(terminalJson(result));
  if (result['isError'] === true) {
    io.err(`mcp-tasks: the tool reported an error${text ? `: ${printable(text, true)}` : ''}`);
    return ExitCode.toolError;
  }
  if (!json && text !== '') io.out(printable(text, true));
  return ExitCode.ok;
}

/** The text of a CallToolResult's content; other kinds of content by a short placeholder. */
function resultText(result: JsonObject): string {
  const content = Array.isArray(result['content']) ? (result['content'] as JsonObject[]) : [];
  const parts = content.map((item) => {
    if (item['type'] === 'text') return String(item['text']);
    if (item['type'] === 'resource_link' || item['type'] === 'resource') return `[${String(item['type'])}: ${String(item['uri'] ?? (item['resource'] as JsonObject | undefined)?.['uri'] ?? '')}]`;
    return `[${String(item['type'])}${item['mimeType'] ? ` ${String(item['mimeType'])}` : ''}]`;
  });
  if (parts.length === 0 && result['structuredContent'] !== undefined) return JSON.stringify(result['structuredContent'], null, 2);
  return parts.join('\n');
}
