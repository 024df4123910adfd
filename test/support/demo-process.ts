import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A demo or gateway node (`packages/demo/src/node/main.ts`, `mcp-tasks-gateway`) running as a child process. */
export interface DemoProcess {
  readonly name: string;
  readonly url: string;
  readonly base: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Exit code (null: killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** Spawns a demo node with `env` and waits until it prints its URL (up to `startTimeoutMs`, default 60 s). */
export async function spawnDemoNode(
  name: string,
  env: Record<string, string>,
  options: {
    readonly startTimeoutMs?: number;
    /**
     * Run the compiled node (`packages/demo/dist`, which `npm test` builds first) instead of the
     * sources through tsx: a dozen processes then start in seconds rather than compiling each.
     */
    readonly compiled?: boolean;
  } = {},
): Promise<DemoProcess> {
  const args = options.compiled ? ['packages/demo/dist/node/main.js'] : ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/node/main.ts'];
  return spawnListeningNode(name, args, env, options.startTimeoutMs ?? 60_000);
}

/**
 * Spawns `mcp-tasks-gateway --config CONFIG` (the build `npm test` makes) with `env` and waits until
 * it prints its URL (up to `startTimeoutMs`, default 45 s).
 */
export function spawnGatewayNode(name: string, config: string, env: Record<string, string>, options: { readonly startTimeoutMs?: number } = {}): Promise<DemoProcess> {
  return spawnListeningNode(name, ['packages/gateway/dist/bin/main.js', '--config', config], { MCP_TASKS_LOG_FORMAT: 'json', ...env }, options.startTimeoutMs ?? 45_000);
}

async function spawnListeningNode(name: string, args: readonly string[], env: Record<string, string>, startTimeoutMs: number): Promise<DemoProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ID: name, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let url: string;
  try {
    url = await waitForOutput(() => output, /listening on (http:\/\/[^\s"]+\/mcp)/, exited, startTimeoutMs);
  } catch (error) {
    // A node that never came up is not the test's to stop: without this it would hold the file open.
    child.kill('SIGKILL');
    throw error;
  }
  return { name, url, base: url.replace(/\/mcp$/, ''), child, output: () => output, exited };
}

/** Resolves with the first capture of `pattern` in the output; rejects when the process exits first. */
export async function waitForOutput(output: () => string, pattern: RegExp, exited: Promise<unknown>, timeoutMs: number): Promise<string> {
  let done = false;
  void exited.then(() => (done = true));
  const start = Date.now();
  for (;;) {
    const match = pattern.exec(output());
    if (match) return match[1]!;
    if (done) throw new Error(`process exited before printing ${pattern}:\n${output()}`);
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${pattern}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The sum of a Prometheus metric's samples on a node's /metrics. */
export async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (match) sum += Number(match[1]);
  }
  return sum;
}

export async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
