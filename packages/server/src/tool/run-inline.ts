import { TaskCancelledError, type ElicitResult, type RootsResult, type SampleResult, type TaskOwner } from '@mcp-tasks/core';
import { inputRequired, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { TaskTool, ToolContext } from './define-tool.js';
import { InlineAnswers, InlineInputNeeded } from './inline-input.js';
import { isInputRequired } from './is-input-required.js';

/**
 * Runs a task tool in the request, like any other tool: `prepare`, then `execute` with a context
 * whose input methods use MRTR (the request is answered input-required, and the client's retry
 * replays the tool with the answers), whose progress goes out as `notifications/progress` when
 * the request carried a progress token, and whose signal is the request's.
 */
export async function runInline<Args, Prepared>(
  tool: TaskTool<Args, Prepared>,
  args: Args,
  owner: TaskOwner,
  mcp: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const inputResponses = mcp.mcpReq.inputResponses ?? {};
  const answers = new InlineAnswers(mcp.mcpReq.requestState(), inputResponses);
  let prepared: Prepared | undefined;
  if (tool.prepare) {
    const outcome = await tool.prepare(args, { owner, asTask: false, inputResponses, mcp });
    if (isInputRequired(outcome)) return outcome;
    prepared = outcome;
  }
  const signal = mcp.mcpReq.signal;
  const progressToken = mcp.mcpReq._meta?.progressToken;
  const ctx: ToolContext<Prepared> = {
    taskId: '',
    owner,
    signal,
    prepared: prepared as Prepared,
    mode: 'inline',
    cancelled: () => signal.aborted,
    progress: async (progress, total, message) => {
      if (progressToken === undefined || signal.aborted) return;
      await mcp.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) },
      });
    },
    elicit: async (key, params) => answers.answer(key, { method: 'elicitation/create', params }) as ElicitResult,
    sample: async (key, params) => {
      if (signal.aborted) throw new TaskCancelledError();
      return answers.answer(key, { method: 'sampling/createMessage', params }) as SampleResult;
    },
    roots: async (key) => {
      if (signal.aborted) throw new TaskCancelledError();
      return answers.answer(key, { method: 'roots/list', params: {} }) as RootsResult;
    },
  };
  try {
    return await tool.execute(args, ctx);
  } catch (error) {
    if (!(error instanceof InlineInputNeeded)) throw error;
    return inputRequired({
      inputRequests: { [error.key]: error.request as unknown as NonNullable<InputRequiredResult['inputRequests']>[string] },
      requestState: answers.encode(),
    });
  }
}
