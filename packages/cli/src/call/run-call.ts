import type { CommandIo, CommandTerminal } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { callArguments, checkArguments } from './call-arguments.js';
import { ConnectionRetry } from './connection-retry.js';
import { listTools } from './tool-listing.js';
import { UsageError } from '../command-errors.js';
import { reportOutcome } from './call-outcome.js';
import type { CallUi } from './call-ui.js';
import { followTask, isTerminal } from './follow-task.js';
import { answerInputRequests, UnsupportedInputError } from './input-requests.js';
import { LineReader } from './line-reader.js';
import { chooseRevision } from './choose-revision.js';
import { answerTaskInput, followLegacyTask } from './follow-legacy-task.js';
import type { LegacyHttpClient } from './legacy-http-client.js';
import { McpHttpClient, RpcError, TransportError, type JsonObject, type RpcClient } from './mcp-http-client.js';
import { plainDisplay, terminalDisplay } from './progress-display.js';
import { printable, printableIo } from '../printable.js';

/** How long a Ctrl-C waits by default for the task to read `cancelled` (a cancel is cooperative) before exiting anyway. */
export const DEFAULT_CANCEL_WAIT_MS = 10_000;
/** How long a task's requests are retried by default while its server is out of reach. */
export const DEFAULT_RETRY_MS = 120_000;
/** Input rounds on the original request (MRTR) before the call gives up on a server that keeps asking. */
const MAX_INPUT_ROUNDS = 32;

export interface CallOptions {
  readonly url: string;
  /** The tool to call; undefined with `taskId` (re-attaching to a task). */
  readonly tool: string | undefined;
  /** `--task ID`: follow this task (created earlier, by this or another client of the same owner). */
  readonly taskId: string | undefined;
  /** How long a task's requests are retried while the server is out of reach (0: not at all). */
  readonly retryMs: number;
  readonly pairs: readonly string[];
  readonly argsJson: string | undefined;
  readonly token: string | undefined;
  readonly json: boolean;
  readonly follow: boolean;
  readonly cancelWaitMs: number;
}

/** `mcp-tasks call`: one tool call followed to its end, and the exit code it ends with. */
export async function runCall(options: CallOptions, givenIo: CommandIo, terminal: CommandTerminal): Promise<number> {
  // Whatever the server wrote (a result, an error, a status, a question) reaches the terminal only through this.
  const io = printableIo(givenIo);
  // The revision's client once the server told which it speaks; the cancel goes through it.
  let client: RpcClient = new McpHttpClient(options.url, options.token);
  let legacy: LegacyHttpClient | undefined;
  // `work` stops the call at the first Ctrl-C; `quit` stops everything (the cancel too) on the way out.
  const work = new AbortController();
  const quit = new AbortController();
  let interrupts = 0;
  let interrupted!: () => void;
  let quitNow!: () => void;
  const firstInterrupt = new Promise<'interrupt'>((resolve) => (interrupted = () => resolve('interrupt')));
  const secondInterrupt = new Promise<'quit'>((resolve) => (quitNow = () => resolve('quit')));
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts === 1) interrupted();
    else quitNow();
  };
  const display = terminal.isTTY ? terminalDisplay(terminal.output, terminal.columns) : plainDisplay(io.err);
  const reader = new LineReader(terminal.input, terminal.output, terminal.isTTY, onInterrupt);
  const ui: CallUi = { display, reader, say: (line) => display.say(printable(line, true)) };
  const stopListening = terminal.onInterrupt(onInterrupt);
  let taskId: string | undefined;
  try {
    const running = (async () => {
      const chosen = await chooseRevision(options.url, options.token, work.signal);
      client = chosen.client;
      if (chosen.revision === '2025-11-25') legacy = chosen.client;
      return chosen.revision === '2025-11-25' ? legacyCall(chosen.client, options, ui, work.signal, (id) => (taskId = id)) : call(chosen.client, options, ui, work.signal, (id) => (taskId = id));
    })();
    running.catch(() => undefined);
    const first = await Promise.race([running, firstInterrupt]);
    if (first !== 'interrupt') {
      display.stop();
      return reportOutcome(first, options.json, io);
    }
    work.abort(new Error('interrupted'));
    reader.close();
    if (taskId === undefined) {
      display.stop();
      io.err('mcp-tasks: interrupted before the server created a task');
      return ExitCode.interrupted;
    }
    display.stop();
    io.err(`Cancelling task ${taskId}; waiting up to ${options.cancelWaitMs / 1000} s for it to stop (Ctrl-C again to quit now)`);
    const stopped = await Promise.race([cancelAndWait(client, taskId, AbortSignal.any([AbortSignal.timeout(options.cancelWaitMs), quit.signal]), io), secondInterrupt]);
    if (stopped === 'quit') {
      io.err(`mcp-tasks: quit without waiting; task ${taskId} may still be running (mcp-tasks call --task ${taskId} ${options.url} follows it)`);
      return ExitCode.interrupted;
    }
    if (stopped === undefined) {
      io.err(`mcp-tasks: task ${taskId} did not read cancelled within ${options.cancelWaitMs / 1000} s; it may still be running`);
      return ExitCode.interrupted;
    }
    if (stopped['status'] === 'cancelled') {
      io.err(`Task ${taskId} cancelled.`);
      return ExitCode.interrupted;
    }
    // It ended some other way before the cancel reached it: that is its outcome.
    return reportOutcome({ task: stopped }, options.json, io);
  } catch (error) {
    display.stop();
    const code = reportError(error, io);
    if (taskId !== undefined && error instanceof TransportError) io.err(`mcp-tasks: task ${taskId} lives on in the server's database; mcp-tasks call --task ${taskId} ${options.url} follows it again`);
    return code;
  } finally {
    stopListening();
    await legacy?.close();
    reader.close();
    display.stop();
    work.abort();
    quit.abort();
  }
}

async function call(client: McpHttpClient, options: CallOptions, ui: CallUi, signal: AbortSignal, onTask: (id: string) => void): Promise<{ result: JsonObject } | { task: JsonObject }> {
  const following = (taskId: string) => {
    onTask(taskId);
    if (options.retryMs > 0) client.retry = new ConnectionRetry(options.retryMs, ui.say);
  };
  if (options.taskId !== undefined) {
    following(options.taskId);
    const task = await client.request('tasks/get', { taskId: options.taskId }, signal);
    ui.say(`Following task ${printable(options.taskId)} (${printable(String(task['status']))}).`);
    return { task: await followTask(client, { ...task, taskId: options.taskId }, options.follow, ui, signal) };
  }
  const tool = options.tool!;
  const listed = await listedTool(client, tool, options.url, signal);
  const args = callArguments(options.pairs, options.argsJson, listed?.['inputSchema']);
  checkArguments(tool, args, listed?.['inputSchema']);
  let result = await client.request('tools/call', { name: tool, arguments: args }, signal);
  // Input the tool asks for before a task exists comes back on the request itself (MRTR): the
  // request is sent again with the answers and the server's requestState.
  for (let round = 0; result['resultType'] === 'input_required'; round += 1) {
    if (round >= MAX_INPUT_ROUNDS) throw new TransportError(`tools/call: the server asked for input ${MAX_INPUT_ROUNDS} times; giving up`);
    const inputResponses = await answerInputRequests((result['inputRequests'] ?? {}) as JsonObject, new Set(), ui.reader, ui.say);
    ui.reader.pause();
    const retry: JsonObject = { name: tool, arguments: args, inputResponses };
    if (result['requestState'] !== undefined) retry['requestState'] = result['requestState'];
    result = await client.request('tools/call', retry, signal);
  }
  if (result['resultType'] !== 'task') return { result };
  if (typeof result['taskId'] !== 'string') throw new TransportError('tools/call: the server answered with a task that has no taskId');
  following(result['taskId']);
  ui.say(`Task ${printable(result['taskId'])} created.`);
  return { task: await followTask(client, result, options.follow, ui, signal) };
}

/**
 * A call to a 2025-11-25 server: a tool listed with `execution.taskSupport` `optional` or
 * `required` is called with `params.task` and followed by `tasks/get` and `tasks/result`
 * (`--follow` has no meaning there: that revision has no listen); any other runs inline, its
 * elicitations answered on the request's own stream.
 */
async function legacyCall(client: LegacyHttpClient, options: CallOptions, ui: CallUi, signal: AbortSignal, onTask: (id: string) => void): Promise<{ result: JsonObject } | { task: JsonObject }> {
  if (options.taskId !== undefined) {
    onTask(options.taskId);
    const task = await client.request('tasks/get', { taskId: options.taskId }, signal);
    ui.say(`Following task ${printable(options.taskId)} (${printable(String(task['status']))}).`);
    return { task: await followLegacyTask(client, { ...task, taskId: options.taskId }, ui, signal) };
  }
  const name = options.tool!;
  const tool = await listedTool(client, name, options.url, signal);
  const args = callArguments(options.pairs, options.argsJson, tool?.['inputSchema']);
  checkArguments(name, args, tool?.['inputSchema']);
  const support = tool?.['execution']?.['taskSupport'];
  const asTask = support === 'optional' || support === 'required';
  client.onServerRequest = answerTaskInput(ui, new Set());
  const answered = await client.request('tools/call', { name, arguments: args, ...(asTask ? { task: {} } : {}) }, signal);
  const created = answered['task'] as JsonObject | undefined;
  if (!asTask || typeof created !== 'object' || created === null) return { result: answered };
  if (typeof created['taskId'] !== 'string') throw new TransportError('tools/call: the server answered with a task that has no taskId');
  onTask(created['taskId']);
  ui.say(`Task ${printable(created['taskId'])} created.`);
  return { task: await followLegacyTask(client, created, ui, signal) };
}

/**
 * The tool as tools/list shows it; undefined when the server answers tools/list with an error (the
 * call goes ahead, and the server says what it thinks of it). A name the list lacks is a usage
 * error that lists the names there are.
 */
async function listedTool(client: RpcClient, tool: string, url: string, signal: AbortSignal): Promise<JsonObject | undefined> {
  const tools = await listTools(client, signal);
  if (tools === undefined) return undefined;
  const found = tools.find((t) => t['name'] === tool);
  if (found) return found;
  const names = tools.map((t) => printable(String(t['name'])));
  throw new UsageError(`no tool ${JSON.stringify(printable(tool))} at ${printable(url)}; its tools are ${names.join(', ') || '(none)'} (mcp-tasks tools ${printable(url)} describes them)`);
}

/** tasks/cancel, then tasks/get until the task is terminal; undefined if it is not before `deadline` aborts. */
async function cancelAndWait(client: RpcClient, taskId: string, deadline: AbortSignal, io: CommandIo): Promise<JsonObject | undefined> {
  try {
    await client.request('tasks/cancel', { taskId }, deadline);
  } catch (error) {
    if (deadline.aborted) return undefined;
    // A task that ended already refuses the cancel; tasks/get below says how it ended.
    if (!(error instanceof RpcError)) throw error;
    io.err(`tasks/cancel: ${error.message}`);
  }
  while (!deadline.aborted) {
    try {
      const task = await client.request('tasks/get', { taskId }, deadline);
      if (isTerminal(task)) return task;
    } catch (error) {
      if (deadline.aborted) return undefined;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

function reportError(error: unknown, io: CommandIo): number {
  if (error instanceof RpcError) {
    io.err(`mcp-tasks: ${error.method}: ${printable(error.message)} (JSON-RPC error ${error.code})`);
    return ExitCode.failed;
  }
  if (error instanceof TransportError || error instanceof UnsupportedInputError) {
    io.err(`mcp-tasks: ${error.message}`);
    return ExitCode.failed;
  }
  throw error;
}
