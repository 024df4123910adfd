import { declaresTasksExtension } from '../capability/tasks-extension.js';
import { checkRequestBody } from '../front/check-request-body.js';
import type { TaskTool } from '../tool/define-tool.js';
import type { DirectRequest } from '../exchange/direct-exchange.js';
import { isPlainObject, readModernRequest, type ModernRequest } from './modern-request.js';

/** A `tools/call` the direct path may serve: it becomes a task of `tool`. */
export interface FastToolCall extends ModernRequest {
  readonly tool: TaskTool;
  /** `params.arguments` as sent (absent: `undefined`), still to be checked against the tool's schema. */
  readonly arguments: unknown;
}

/**
 * The request, when the SDK path would make it a task without asking anything first: a
 * 2026-07-28 `tools/call` ({@link readModernRequest}) with `Mcp-Name` equal to `params.name`, of
 * a task tool of `tools` whose task support is `required` or `optional` and which has no
 * `prepare` (that may ask for input on the request, which stays the SDK's), `arguments` an
 * object when present, no `inputResponses` or `requestState` (retries of a multi-round-trip call),
 * and the tasks extension declared in the envelope. Anything else is `undefined`, for the SDK;
 * so is a body the front door's checks refuse (a host may call `serveDirect` before them).
 */
export function readFastToolCall(request: DirectRequest, tools: ReadonlyMap<string, TaskTool>): FastToolCall | undefined {
  let tool: TaskTool | undefined;
  const read = readModernRequest(request, (method, params) => {
    if (method !== 'tools/call') return undefined;
    const name = params['name'];
    if (typeof name !== 'string') return undefined;
    tool = tools.get(name);
    if (tool === undefined || tool.task === 'forbidden' || tool.prepare !== undefined) return undefined;
    if ('arguments' in params && !isPlainObject(params['arguments'])) return undefined;
    if ('inputResponses' in params || 'requestState' in params) return undefined;
    return name;
  });
  if (!read || tool === undefined || checkRequestBody(request.body) !== undefined) return undefined;
  if (!declaresTasksExtension({ mcpReq: { envelope: read.envelope } })) return undefined;
  return { ...read, tool, arguments: read.rawParams['arguments'] };
}
