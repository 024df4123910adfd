import type { Command } from '../command.js';
import { UsageError } from '../command-errors.js';
import { DEFAULT_CANCEL_WAIT_MS, DEFAULT_RETRY_MS, runCall } from '../call/run-call.js';

export const callCommand: Command = {
  name: 'call',
  summary: 'call a tool of an MCP server, following its task to the end (progress, input, Ctrl-C cancels)',
  positionals: 'URL TOOL',
  usage: `Usage: mcp-tasks call URL TOOL [--arg key=value]... [--args JSON] [--token T] [--json] [--follow]
       mcp-tasks call --task ID URL [--token T] [--json] [--follow]

Calls TOOL on the MCP server at URL (Streamable HTTP, protocol 2026-07-28, declaring the tasks
extension). When the server answers with a task, follows it until it ends: a progress bar when
its status message reads n/total (a spinner and the message otherwise) on a terminal, plain lines
otherwise; each question the tool asks (a form elicitation) is asked here and answered with
tasks/update. Ctrl-C cancels the task (tasks/cancel) and waits for it to read cancelled (a
cancel is cooperative; --cancel-wait bounds the wait); a second Ctrl-C quits at once. Prints the result's text on stdout; progress and questions go to
stderr.
  --arg key=value        one argument; a number, boolean or JSON value where the tool's input
                         schema says so, a string otherwise (repeatable)
  --args <json>          the arguments as one JSON object (--arg values win)
  --token <token>        bearer token (default: the MCP_TASKS_TOKEN variable)
  --json                 print the whole result (or the failed task) as JSON
  --follow               follow the task with subscriptions/listen instead of polling tasks/get
  --cancel-wait <s>      after Ctrl-C, wait this many seconds for the task to stop (default ${DEFAULT_CANCEL_WAIT_MS / 1000})
  --task <id>            follow a task created earlier (by this command, or any client of the same
                         owner) instead of calling a tool: its progress, its questions, its result
  --retry-for <s>        once a task exists, retry its requests with backoff this long while the
                         server is out of reach (a node restarting: the task lives in its database);
                         0 gives up at the first failure (default ${DEFAULT_RETRY_MS / 1000})

A TOOL the server does not list is refused with the names it lists (mcp-tasks tools URL
describes them), and arguments are checked against the tool's input schema before the call:
a missing one, or one of the wrong type, is named with the type it takes.

Exit codes: 0 the tool's result, 1 a JSON-RPC error, a failed or cancelled task, or the server
out of reach, 2 the command line is wrong, 5 the tool reported an error (isError), 130 Ctrl-C.`,
  options: {
    arg: { type: 'string', multiple: true },
    args: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
    follow: { type: 'boolean' },
    'cancel-wait': { type: 'string' },
    task: { type: 'string' },
    'retry-for': { type: 'string' },
  },
  async run({ values, positionals, io, env }) {
    const [url, tool, extra] = positionals;
    const taskId = typeof values['task'] === 'string' ? values['task'] : undefined;
    if (taskId !== undefined) {
      if (url === undefined) throw new UsageError('mcp-tasks call --task ID needs the server\'s URL; see mcp-tasks call --help');
      if (tool !== undefined) throw new UsageError(`mcp-tasks call --task ID URL follows a task and calls no tool (got ${JSON.stringify(tool)} too)`);
      if (taskId === '') throw new UsageError('--task needs a task id');
    } else {
      if (url === undefined || tool === undefined) throw new UsageError('mcp-tasks call needs a URL and a TOOL (or --task ID and a URL); see mcp-tasks call --help');
      if (extra !== undefined) throw new UsageError(`mcp-tasks call takes a URL and a TOOL, then options (got ${JSON.stringify(extra)} too)`);
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`${JSON.stringify(url)} is not a URL; expected e.g. http://127.0.0.1:3000/mcp`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`the URL must start with http:// or https:// (got ${parsed.protocol}//)`);
    if (io.terminal === undefined) throw new UsageError('mcp-tasks call needs a terminal (stdin and stderr)');
    const wait = values['cancel-wait'];
    const cancelWaitSeconds = typeof wait === 'string' ? Number(wait) : DEFAULT_CANCEL_WAIT_MS / 1000;
    if (!Number.isFinite(cancelWaitSeconds) || cancelWaitSeconds <= 0) throw new UsageError(`--cancel-wait must be a positive number of seconds (got ${JSON.stringify(wait)})`);
    const retryText = values['retry-for'];
    const retrySeconds = typeof retryText === 'string' ? Number(retryText) : DEFAULT_RETRY_MS / 1000;
    if (!Number.isFinite(retrySeconds) || retrySeconds < 0) throw new UsageError(`--retry-for must be a number of seconds, 0 or more (got ${JSON.stringify(retryText)})`);
    const token = typeof values['token'] === 'string' ? values['token'] : env['MCP_TASKS_TOKEN'] || undefined;
    return runCall(
      {
        url,
        tool,
        taskId,
        retryMs: Math.round(retrySeconds * 1000),
        pairs: Array.isArray(values['arg']) ? values['arg'] : [],
        argsJson: typeof values['args'] === 'string' ? values['args'] : undefined,
        token,
        json: values['json'] === true,
        follow: values['follow'] === true,
        cancelWaitMs: Math.round(cancelWaitSeconds * 1000),
      },
      io,
      io.terminal,
    );
  },
};
