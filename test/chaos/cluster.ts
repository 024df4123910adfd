// The soak's demo node processes: started, killed, stopped, drained and restarted on the fault
// schedule's orders, each on a port of its own that it keeps across restarts (clients keep its URL).
import { spawn } from 'node:child_process';
import { ROOT, waitForOutput, type DemoProcess } from '../support/demo-process.js';

export { freePort } from '../../bench/support/demo-nodes.js';

/** A node starts from source (tsx): on a loaded 2-core machine that takes tens of seconds. */
const START_TIMEOUT_MS = 90_000;

export interface NodeSpec {
  readonly name: string;
  /** MCP_TASKS_TOKENS for a node with authorization; absent: a node without (the host scope owner). */
  readonly tokensFile?: string;
  /** The node's DATABASE_URL (through the chaos proxy for one of them). */
  readonly databaseUrl: string;
  /** Run the built demo (`packages/demo/dist`, after `npm run build`) instead of the source through tsx: a start costs a loaded machine seconds, not tens of them. */
  readonly compiled?: boolean;
  /** Wall-clock skew in seconds (libfaketime) for the next start; 0 or absent: none. */
  skewSeconds?: number;
}

export class ChaosNode {
  readonly spec: NodeSpec;
  readonly port: number;
  readonly url: string;
  #process: DemoProcess | undefined;
  #starting: Promise<void> | undefined;
  readonly #env: Record<string, string>;
  /** The process the harness is stopping (its exit is no crash). */
  #stopping: DemoProcess | undefined;
  /**
   * Called when a node process exits that nobody told to (a crash), with its exit and the tail of
   * its output. A supervisor restarts such a process; the soak records it as a violation.
   */
  onCrash: ((crash: NodeCrash) => void) | undefined;
  /** Starts that failed (the process exited before listening) before the last successful one. */
  failedStarts = 0;

  constructor(spec: NodeSpec, port: number, env: Record<string, string>) {
    this.spec = spec;
    this.port = port;
    this.url = `http://127.0.0.1:${port}/mcp`;
    this.#env = env;
  }

  get name(): string {
    return this.spec.name;
  }

  get up(): boolean {
    return this.#process !== undefined && this.#process.child.exitCode === null && this.#process.child.signalCode === null;
  }

  /** Starts the node's process, unless one is up (a supervisor's restart and a fault's may meet). */
  async start(): Promise<void> {
    if (this.up && !this.#starting) return;
    this.#starting ??= (async () => {
      const env: Record<string, string> = { ...this.#env, PORT: String(this.port), DATABASE_URL: this.spec.databaseUrl };
      if (this.spec.tokensFile) env['MCP_TASKS_TOKENS'] = this.spec.tokensFile;
      if (this.spec.skewSeconds) {
        // libfaketime: the node's wall clock runs skewed, its monotonic clock is left alone.
        env['LD_PRELOAD'] = FAKETIME_LIBRARY;
        env['FAKETIME'] = `${this.spec.skewSeconds > 0 ? '+' : ''}${this.spec.skewSeconds}s`;
        env['FAKETIME_DONT_FAKE_MONOTONIC'] = '1';
        env['DONT_FAKE_MONOTONIC'] = '1';
      }
      // Like a supervisor: a process that exits before it listens (its database unreachable at
      // start) is started again, until the start bound.
      const deadline = Date.now() + START_TIMEOUT_MS;
      this.failedStarts = 0;
      for (;;) {
        try {
          this.#process = await spawnNode(this.spec.name, env, Math.max(1_000, deadline - Date.now()), this.spec.compiled ?? false);
          break;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (!message.startsWith('process exited') || Date.now() > deadline - 1_000) throw error;
          this.failedStarts++;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
      const started = this.#process;
      void started.exited.then((code) => {
        if (this.#stopping === started) return;
        this.onCrash?.({ node: this.name, t: Date.now(), code, signal: started.child.signalCode, output: lastLines(started.output(), 40) });
      });
    })().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.#process && this.#process.child.exitCode === null) this.#process.child.kill(signal);
  }

  /**
   * Sends `signal` and waits (at most `timeoutMs`, then SIGKILL) for the process to exit; says
   * how long it took, and whether it had to be killed.
   */
  async stopWith(signal: NodeJS.Signals, timeoutMs: number): Promise<string> {
    const current = this.#process;
    if (!current) return 'not running';
    this.#stopping = current;
    const started = Date.now();
    let killed = false;
    if (current.child.exitCode === null && current.child.signalCode === null) {
      current.child.kill('SIGCONT');
      current.child.kill(signal);
      const timer = setTimeout(() => {
        killed = true;
        current.child.kill('SIGKILL');
      }, timeoutMs);
      await current.exited;
      clearTimeout(timer);
    }
    if (this.#process === current) this.#process = undefined;
    return `exited in ${Date.now() - started} ms${killed ? ` (killed: no exit within ${timeoutMs} ms)` : ''}`;
  }
}

/** A node process that exited without being told to. */
export interface NodeCrash {
  readonly node: string;
  readonly t: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last lines of its output (the error that ended it). */
  readonly output: string;
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

/** Like the tests' spawnDemoNode, with a start bound for a machine under the soak's load. */
async function spawnNode(name: string, env: Record<string, string>, timeoutMs: number, compiled: boolean): Promise<DemoProcess> {
  const args = compiled ? ['packages/demo/dist/node/main.js'] : ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/node/main.ts'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ID: name, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const url = await waitForOutput(() => output, /listening on (http:\/\/\S+\/mcp)/, exited, timeoutMs);
    return { name, url, base: url.replace(/\/mcp$/, ''), child, output: () => output, exited };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
}

export const FAKETIME_LIBRARY = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
