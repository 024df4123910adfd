import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One demo node run as a child process (`node dist/node/main.js` with its environment). */
export interface NodeProcess {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code once the process ended (`null`: killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Listening and not stopping. */
  available(): boolean;
  /** Resolves once the node printed its URL; rejects when it exits first. */
  readonly ready: Promise<void>;
  /** SIGTERM (drain), then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<number | null>;
}

/** The node entry next to this module: `dist/node/main.js`, or `src/node/main.ts` when running from source. */
export function nodeEntry(): string {
  const js = fileURLToPath(new URL('../node/main.js', import.meta.url));
  if (existsSync(js)) return js;
  return fileURLToPath(new URL('../node/main.ts', import.meta.url));
}

/** Starts a demo node with `env` on top of this process's environment; its output is prefixed with its name. */
export function startNodeProcess(name: string, host: string, port: number, env: NodeJS.ProcessEnv): NodeProcess {
  const child = spawn(process.execPath, [...process.execArgv, nodeEntry()], {
    env: { ...process.env, ...env, NODE_ID: name, HOST: host, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let listening = false;
  let stopping = false;
  let markReady!: () => void;
  let failReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!listening && line.includes('listening on')) {
          listening = true;
          markReady();
        }
        out.write(`[${name}] ${line}\n`);
      }
    });
  };
  prefix(child.stdout!, process.stdout);
  prefix(child.stderr!, process.stderr);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      listening = false;
      failReady(new Error(`${name} exited (code ${code}) before it listened`));
      resolve(code);
    }),
  );
  ready.catch(() => undefined);
  return {
    name,
    host,
    port,
    child,
    exited,
    ready,
    available: () => listening && !stopping,
    async stop(graceMs) {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
