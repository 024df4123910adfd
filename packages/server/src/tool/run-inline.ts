import { admitInputRequest, TaskCancelledError, type ElicitResult, type InputRequest, type InputResponse, type JsonObject, type RootsResult, type SampleResult, type TaskOwner, type TaskStep } from '@mcp-tasks/core';
import { inputRequired, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import { clientCapabilitiesOf } from '../capability/client-capabilities.js';
import type { TaskTool, ToolContext } from './define-tool.js';
import { InlineAnswers, InlineInputNeeded } from './inline-input.js';
import { inlineRunOf } from './inline-run-carrier.js';
import { isInputRequired } from './is-input-required.js';

/**
 * Runs a task tool in the request, like any other tool: `prepare`, then `execute` with a context
 * whose input methods use MRTR (the request is answered input-required, and the client's retry
 * replays the tool with the answers), whose progress goes out as `notifications/progress` when
 * the request carried a progress token, and whose signal is the request's. Input requests are
 * checked as a task's are (protocol shape, the request's declared capabilities) before the
 * request is answered input-required. With a carrier from the `tools/call` handler, `prepare`
 * is skipped when it already ran, and a JSON-RPC error the tool throws is left there for the
 * handler to answer (see {@link inlineRunOf}).
 */
export async function runInline<Args, Prepared>(
  tool: TaskTool<Args, Prepared>,
  args: Args,
  owner: TaskOwner,
  mcp: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const inputResponses = mcp.mcpReq.inputResponses ?? {};
  const answers = new InlineAnswers(mcp.mcpReq.requestState(), inputResponses);
  const carrier = inlineRunOf(mcp);
  const capabilities = clientCapabilitiesOf(mcp);
  const answer = (key: string, request: InputRequest): InputResponse => {
    admitInputRequest(key, request, capabilities);
    return answers.answer(key, request);
  };
  let prepared = carrier?.prepared?.value as Prepared | undefined;
  if (tool.prepare && !carrier?.prepared) {
    const outcome = await tool.prepare(args, { owner, asTask: false, inputResponses, mcp });
    if (isInputRequired(outcome)) return carrier?.inputRequired?.(outcome) ?? outcome;
    prepared = outcome;
  }
  const signal = mcp.mcpReq.signal;
  // An inline run has no journal: it lives and dies with its request, so each step just runs
  // (again on each MRTR round), and the journal shows this round's steps.
  const steps = new Map<string, TaskStep>();
  const progressToken = mcp.mcpReq._meta?.progressToken;
  const ctx: ToolContext<Prepared> = {
    taskId: '',
    owner,
    signal,
    prepared: prepared as Prepared,
    mode: 'inline',
    cancelled: () => signal.aborted,
    attempt: 1,
    step: async (name, fn) => {
      if (signal.aborted) throw new TaskCancelledError();
      steps.set(name, { name, starts: (steps.get(name)?.starts ?? 0) + 1, done: false });
      const value = await fn();
      steps.set(name, { name, starts: steps.get(name)!.starts, done: true });
      return value;
    },
    journal: async () => [...steps.values()],
    progress: async (progress, total, message) => {
      if (progressToken === undefined || signal.aborted) return;
      await mcp.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) },
      });
    },
    elicit: async (key, params) => answer(key, { method: 'elicitation/create', params: params as JsonObject }) as ElicitResult,
    sample: async (key, params) => {
      if (signal.aborted) throw new TaskCancelledError();
      return answer(key, { method: 'sampling/createMessage', params: params as JsonObject }) as SampleResult;
    },
    roots: async (key) => {
      if (signal.aborted) throw new TaskCancelledError();
      return answer(key, { method: 'roots/list', params: {} }) as RootsResult;
    },
  };
  try {
    return await tool.execute(args, ctx);
  } catch (error) {
    if (!(error instanceof InlineInputNeeded)) {
      const rpcError = carrier?.classify(error);
      if (!carrier || !rpcError) throw error;
      // The SDK would turn this into an isError result; the handler answers it as the JSON-RPC
      // error it is. What is returned here is never sent.
      carrier.thrown = rpcError;
      return { content: [], isError: true };
    }
    const asked = inputRequired({
      inputRequests: { [error.key]: error.request as unknown as NonNullable<InputRequiredResult['inputRequests']>[string] },
      requestState: answers.encode(),
    });
    return carrier?.inputRequired?.(asked) ?? asked;
  }
}
