import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import type { TaskTool } from './define-tool.js';

/**
 * Checks a task's result against its tool's `outputSchema` exactly as the SDK's McpServer checks
 * an ordinary tool's (same rules, same -32602 messages): an error result is not checked, any
 * other must carry `structuredContent` that the schema accepts. The task then ends `failed`.
 */
export async function validateToolOutput(tool: Pick<TaskTool, 'name' | 'outputSchema'>, result: CallToolResult): Promise<CallToolResult> {
  if (!tool.outputSchema || result.isError) return result;
  if (result.structuredContent === undefined) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Output validation error: Tool ${tool.name} has an output schema but no structured content was provided`);
  }
  const checked = await tool.outputSchema['~standard'].validate(result.structuredContent);
  if (checked.issues && checked.issues.length > 0) {
    const detail = checked.issues.map(formatIssue).join(', ');
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Output validation error: Invalid structured content for tool ${tool.name}: ${detail}`);
  }
  return result;
}

type Issue = { readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined };

function formatIssue(issue: Issue): string {
  if (!issue.path?.length) return issue.message;
  return `${issue.path.map((part) => String(typeof part === 'object' ? part.key : part)).join('.')}: ${issue.message}`;
}
