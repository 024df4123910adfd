import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { TaskTool } from '../tool/define-tool.js';

/** A task tool's arguments checked: the parsed value, or the -32602 error that says what was wrong. */
export type CheckedArguments = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: ProtocolError };

/**
 * `raw` (absent is `{}`) checked against the size limit and parsed once with the tool's own
 * schema: what a task gets as its arguments, or the error both request paths answer with.
 */
export function checkArguments(tool: TaskTool, raw: unknown, maxBytes: number): CheckedArguments {
  const value = raw ?? {};
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > maxBytes) {
    return { ok: false, error: new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: arguments are ${bytes} bytes; the limit is ${maxBytes}`) };
  }
  const parsed = tool.input.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const detail = parsed.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
  return { ok: false, error: new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: ${detail}`) };
}

/** {@link checkArguments}, throwing its error. */
export function parseArguments(tool: TaskTool, raw: unknown, maxBytes: number): unknown {
  const checked = checkArguments(tool, raw, maxBytes);
  if (!checked.ok) throw checked.error;
  return checked.value;
}
